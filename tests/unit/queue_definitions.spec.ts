import { test } from '@japa/runner'
import { JOBS, QUEUE_NAMES, SCHEDULES } from '#core/queue/jobs'
import { HANDLERS } from '#core/queue/handlers'

test.group('queue definitions', () => {
  test('every job has a handler that loads, on a known queue', async ({ assert }) => {
    for (const [key, job] of Object.entries(JOBS)) {
      assert.include(QUEUE_NAMES, job.queue, key)
      assert.isTrue(Object.hasOwn(HANDLERS, job.name), `${key} (${job.name}) has no handler`)
      assert.isFunction(await HANDLERS[job.name](), key)
    }
    assert.lengthOf(Object.keys(HANDLERS), Object.keys(JOBS).length)
  })

  test('schedules name real jobs; callbacks follow the spec (5 attempts)', ({ assert }) => {
    for (const schedule of SCHEDULES) assert.property(JOBS, schedule.job)
    assert.equal(JOBS.deliverCallback.attempts, 5)
    assert.equal(JOBS.deliverCallback.backoff.type, 'fixed')
  })
})
