import { test } from '@japa/runner'
import { ProcessCache, configChanged } from '#core/process_cache'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

test.group('ProcessCache', () => {
  test('keeps a value for its lifetime, then reads again', async ({ assert }) => {
    let reads = 0
    const cache = new ProcessCache<string, number>(() => 50)
    const load = async () => ++reads
    assert.equal(await cache.get('a', load), 1)
    assert.equal(await cache.get('a', load), 1)
    await sleep(70)
    assert.equal(await cache.get('a', load), 2)
  })

  test('concurrent readers share one read; forget() drops a key or everything', async ({
    assert,
  }) => {
    let reads = 0
    const cache = new ProcessCache<string, number>(() => 60_000)
    const load = async () => {
      await sleep(10)
      return ++reads
    }
    assert.deepEqual(await Promise.all([cache.get('a', load), cache.get('a', load)]), [1, 1])
    cache.forget('a')
    assert.equal(await cache.get('a', load), 2)
    assert.equal(await cache.get('b', load), 3)
    cache.forget()
    assert.equal(await cache.get('a', load), 4)
    assert.equal(await cache.get('b', load), 5)
  })

  test('a failed read is not kept; a lifetime of 0 reads every time', async ({ assert }) => {
    let reads = 0
    const cache = new ProcessCache<string, number>(() => 60_000)
    await assert.rejects(() => cache.get('a', async () => Promise.reject(new Error('down'))))
    assert.equal(await cache.get('a', async () => ++reads), 1)

    const off = new ProcessCache<string, number>(() => 0)
    await off.get('a', async () => ++reads)
    assert.equal(await off.get('a', async () => ++reads), 3)
  })

  test('bounded: the oldest key leaves first', async ({ assert }) => {
    let reads = 0
    const cache = new ProcessCache<string, number>(() => 60_000, 2)
    const load = async () => ++reads
    await cache.get('a', load)
    await cache.get('b', load)
    await cache.get('c', load)
    assert.equal(await cache.get('b', load), 2)
    assert.equal(await cache.get('a', load), 4)
  })

  test('configChanged forgets now and again when the transaction commits', async ({ assert }) => {
    let forgotten = 0
    let onCommit: (() => Promise<void> | void) | undefined
    const trx = {
      isCompleted: false,
      after: (_: 'commit', handler: () => Promise<void> | void) => (onCommit = handler),
    }
    await configChanged(trx as any, () => forgotten++)
    assert.equal(forgotten, 1)
    await onCommit!()
    assert.equal(forgotten, 2)
  })
})
