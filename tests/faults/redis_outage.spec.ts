import { test } from '@japa/runner'
import { schedulerIds } from '#tests/faults/helpers/gateway'
import { outageScenario } from '#tests/faults/helpers/outage'
import { until } from '#tests/faults/helpers/processes'
import { Scenario } from '#tests/faults/helpers/scenario'
import { TIMINGS, world } from '#tests/faults/helpers/world'

/** The job schedulers must be back this soon after Redis, without restarting a worker. */
const SCHEDULES_BACK_MS = 2 * TIMINGS.SCHEDULE_CHECK_INTERVAL_MS + 1000

test.group('d. Redis outage', () => {
  test('Redis killed under load and restarted empty: fast answers, schedules back, every order final', async ({
    assert,
  }) => {
    const s = new Scenario('d. Redis stopped under load, restarted empty (no persistence)')
    let schedulesBefore: string[] = []
    try {
      await outageScenario(s, {
        label: 'redis-outage',
        stop: async () => {
          schedulesBefore = await schedulerIds()
          await world().redis.stop('SIGKILL')
        },
        start: () => world().redis.start(),
        afterRestart: async (backAt) => {
          const same = (ids: string[]) =>
            ids.length === schedulesBefore.length &&
            ids.every((id, index) => id === schedulesBefore[index])
          const back = await until(async () => same(await schedulerIds()), 30_000, 100)
          const ms = Date.now() - backAt
          const now = await schedulerIds().catch(() => [] as string[])
          s.report.add(
            'job schedulers before',
            `${schedulesBefore.length}: ${schedulesBefore.join(', ')}`
          )
          s.report.add(
            'job schedulers back',
            back
              ? `all ${now.length} after ${(ms / 1000).toFixed(1)} s`
              : `not in 30 s (${now.length}: ${now.join(', ') || 'none'})`
          )
          s.expect(schedulesBefore.length > 0, 'harness: no job schedulers before the outage')
          s.expect(
            back && ms <= SCHEDULES_BACK_MS,
            `job schedulers ${back ? `back only after ${ms} ms` : 'not back in 30 s'} (expected ≤ ${SCHEDULES_BACK_MS} ms, no worker restarted)`
          )
        },
      })
    } catch (error) {
      s.failures.push(`harness: ${(error as Error).stack ?? error}`)
    } finally {
      await s.close(assert)
    }
  })
})
