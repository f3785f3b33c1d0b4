import { test } from '@japa/runner'
import { releaseBootMemory } from '#core/boot_memory'

test.group('releaseBootMemory', () => {
  test('collects what is no longer referenced and leaves no global gc behind', ({ assert }) => {
    const hadGc = typeof (globalThis as { gc?: unknown }).gc === 'function'
    let garbage: Array<{ index: number; text: string }> | null = []
    for (let index = 0; index < 200_000; index++) garbage.push({ index, text: `row ${index}` })
    const before = process.memoryUsage().heapUsed
    garbage = null
    releaseBootMemory()
    const after = process.memoryUsage().heapUsed
    assert.isBelow(after, before - 5 * 1024 * 1024)
    assert.equal(typeof (globalThis as { gc?: unknown }).gc === 'function', hadGc)
  })
})
