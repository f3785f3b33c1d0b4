import { keepAliveAgent, isErrorEnvelope, isSuccess } from '#tests/faults/helpers/client'
import {
  createMerchant,
  health,
  merchantClient,
  letMerchantPaymentsExpire,
  payOrders,
  startWeb,
  startWorker,
} from '#tests/faults/helpers/gateway'
import { Load, type Sample } from '#tests/faults/helpers/load'
import { sleep } from '#tests/faults/helpers/processes'
import type { Scenario } from '#tests/faults/helpers/scenario'
import { TIMINGS, world } from '#tests/faults/helpers/world'

/** Answers during an outage must come this fast (p95), ms. */
export const OUTAGE_P95_MS = 1500
const BEFORE_MS = 4000
const OUTAGE_MS = 8000
const AFTER_MS = 8000
/** After the dependency is back, requests started this much later must all succeed. */
const RECOVERY_GRACE_MS = 3000

/**
 * A dependency (MariaDB or Redis) stops under load and comes back, while one
 * web process and one worker keep running (never restarted):
 * - during the outage every request is answered quickly, with success or the
 *   503 service-unavailable envelope;
 * - once it is back, requests succeed again;
 * - `afterRestart` checks what the dependency needs (schedules for Redis);
 * - every order created before, during and after reaches a final state, and
 *   the ledger verifies.
 */
export async function outageScenario(
  s: Scenario,
  options: {
    label: string
    stop: () => Promise<void>
    start: () => Promise<void>
    /** Runs right after the dependency is back, while the load goes on. */
    afterRestart?: (backAt: number) => Promise<void>
  }
) {
  const agent = keepAliveAgent(8)
  try {
    const merchant = await createMerchant(options.label, 1_000_000_00)
    const web = await startWeb()
    s.track(web.process)
    const worker = s.track(await startWorker())
    const client = merchantClient(merchant, web)
    const load = new Load(client, {
      concurrency: 6,
      mix: ['withdraw', 'payment', 'balance', 'withdraw', 'balance'],
      notifyUrl: world().receiver.url,
      agent,
      timeoutMs: 20_000,
      pauseMs: 50,
    }).start()

    await sleep(BEFORE_MS)
    const outageAt = Date.now()
    await options.stop()
    const healthDuring = await health(web.url)
    await sleep(OUTAGE_MS)
    const restartAt = Date.now()
    await options.start()
    const backAt = Date.now()
    await options.afterRestart?.(backAt)
    const remaining = backAt + AFTER_MS - Date.now()
    if (remaining > 0) await sleep(remaining)
    await load.stop()
    const healthAfter = await health(web.url)

    // In flight when the dependency went away counts as during the outage.
    const before = load.samples.filter((sample) => sample.startedAt + sample.ms < outageAt)
    const during = load.samples.filter(
      (sample) => sample.startedAt < restartAt && sample.startedAt + sample.ms >= outageAt
    )
    const after = load.between(backAt + RECOVERY_GRACE_MS)
    const failedAfter = load.between(backAt).filter((sample) => !isSuccess(sample))
    const lastFailure = Math.max(0, ...failedAfter.map((sample) => sample.startedAt - backAt))
    s.report.addLatency('before the outage', before)
    const duringSummary = s.report.addLatency(`during (${OUTAGE_MS / 1000} s down)`, during)
    s.report.add('restart took', `${((backAt - restartAt) / 1000).toFixed(1)} s`)
    const firstSuccess = load.samples
      .filter((sample) => sample.startedAt >= backAt && isSuccess(sample))
      .sort((a, b) => a.startedAt + a.ms - (b.startedAt + b.ms))[0]
    s.report.add(
      'first success after restart',
      firstSuccess
        ? `${((firstSuccess.startedAt + firstSuccess.ms - backAt) / 1000).toFixed(1)} s`
        : 'none'
    )
    s.report.addLatency(`after (from +${RECOVERY_GRACE_MS / 1000} s)`, after)
    if (failedAfter.length > 0) {
      s.report.add(
        'failures after restart',
        `${failedAfter.length}, the last sent at +${(lastFailure / 1000).toFixed(1)} s: ${describeFailures(failedAfter)}`
      )
    }
    s.report.add(
      'GET /health',
      `during ${healthDuring.status} ${healthDuring.json?.status ?? ''}, after ${healthAfter.status} ${healthAfter.json?.status ?? ''}`
    )

    s.expect(before.every(isSuccess), 'requests failed before the outage (see the table)')
    s.expect(
      duringSummary.p95 <= OUTAGE_P95_MS,
      `during the outage p95 latency ${duringSummary.p95} ms (max ${duringSummary.max} ms), expected ≤ ${OUTAGE_P95_MS} ms`
    )
    const wrong = during.filter(
      (sample) => !isSuccess(sample) && !isErrorEnvelope(sample, 503, 'service-unavailable')
    )
    s.expect(
      wrong.length === 0,
      `${wrong.length} of ${during.length} requests during the outage answered neither success nor 503 service-unavailable: ${describeFailures(wrong)}`
    )
    s.expect(
      after.length > 0 && after.every(isSuccess),
      `after the restart ${after.filter((sample) => !isSuccess(sample)).length} of ${after.length} requests failed`
    )
    s.expect(
      web.process.alive && worker.alive,
      'the web process or the worker exited (they must ride the outage out)'
    )

    // A third of the payments are paid (before, during or after the outage); the rest expire.
    const payments = load.createdPayments()
    const paid = await payOrders(payments.filter((_, index) => index % 3 === 0))
    s.report.add('payments paid', `${paid.matched} of ${payments.length} (the rest expire)`)
    // The rest outlive their TTL at once; the worker's sweep expires them.
    s.report.add('payments left to expire', String(await letMerchantPaymentsExpire(merchant)))
    await s.settle(merchant, 2 * TIMINGS.SWEEP_INTERVAL_MS + 30_000)
  } finally {
    agent.destroy()
  }
}

/** Distinct kinds of failed answers: endpoint, status, error identifier and message. */
function describeFailures(samples: Sample[]) {
  const kinds = new Map<string, number>()
  for (const sample of samples) {
    // Request ids and order ids differ per answer; the kind of answer does not.
    const message = String(sample.json?.message ?? sample.text)
      .replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, '<id>')
      .slice(0, 80)
    const answer = sample.status
      ? `${sample.status} ${sample.json?.error ?? ''} "${message}"`
      : `no answer (${sample.error})`
    const key = `${sample.kind}: ${answer}`
    kinds.set(key, (kinds.get(key) ?? 0) + 1)
  }
  return [...kinds.entries()]
    .slice(0, 5)
    .map(([key, n]) => `${n}× ${key}`)
    .join('; ')
}
