import { test } from '@japa/runner'
import { JOBS, QUEUE_NAMES, SCHEDULES } from '#jobs/jobs'
import { HANDLERS } from '#jobs/handlers'
import {
  jobDefinition,
  jobHandler,
  jobSchedules,
  queueNames,
  rebuildScheduleIds,
  type JobKey,
  type QueueName,
} from '#core/queue/registry'

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

test.group('job registration', () => {
  test('the queue mechanism holds the table of app/jobs, registered at boot', ({ assert }) => {
    assert.deepEqual(queueNames(), QUEUE_NAMES)
    for (const key of Object.keys(JOBS) as Array<keyof typeof JOBS>) {
      assert.strictEqual(jobDefinition(key), JOBS[key], key)
      assert.strictEqual(jobHandler(JOBS[key].name), HANDLERS[JOBS[key].name], key)
    }
    assert.deepEqual(jobSchedules(), SCHEDULES)
    assert.isUndefined(jobHandler('no.such-job'))
    const ids = SCHEDULES.map((schedule) => schedule.id)
    for (const id of rebuildScheduleIds()) assert.include(ids, id)
  })

  test('job keys and queue names are typed by the table of app/jobs', ({ assert }) => {
    const keys: JobKey[] = ['deliverCallback', 'sweepPayouts']
    const queues: QueueName[] = keys.map((key) => jobDefinition(key).queue)
    assert.deepEqual(queues, ['callbacks', 'payouts'])
    // The compiler refuses names the table does not hold (npm run typecheck).
    // @ts-expect-error: not a job of app/jobs/jobs.ts
    const unknownJob: JobKey = 'noSuchJob'
    // @ts-expect-error: not a queue of app/jobs/jobs.ts
    const unknownQueue: QueueName = 'noSuchQueue'
    assert.throws(() => jobDefinition(unknownJob), 'Unknown job noSuchJob')
    assert.notInclude(queueNames(), unknownQueue)
  })
})
