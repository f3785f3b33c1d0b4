import { sleep } from '#tests/faults/helpers/processes'
import { percentile, ScenarioReport } from '#tests/faults/helpers/report'
import type { Attempt, MixedLoad } from '#tests/cluster_faults/helpers/mixed_load'

/** At most this many seconds with refused requests per fault. */
export const REFUSED_SECONDS_TARGET = 15
/** Full service = this long with every attempt answered success. */
const STEADY_MS = 5000

export interface FaultFigures {
  title: string
  refusedSeconds: number
  refused503: number
  unanswered: number
  failed: number
  fullServiceMs?: number
  failures: string[]
}

/**
 * One fault under the mixed load: `inject` (returns when the fault is in
 * place), `recover` (the component is back), then the load is watched until
 * STEADY_MS pass with every attempt a success (full service). The figures:
 * - refused seconds: distinct seconds (from the injection) in which an
 *   attempt was refused (503 envelope) or went unanswered (retried safely);
 * - other failures: attempts that were neither success, 503, nor unanswered;
 * - time to full service: from the injection to the end of the last
 *   attempt that was not a success.
 */
export async function runFault(
  load: MixedLoad,
  title: string,
  steps: { inject: () => Promise<void>; recover: () => Promise<void> },
  log: (line: string) => void
): Promise<FaultFigures> {
  const report = new ScenarioReport(title)
  const failures: string[] = []
  const injectAt = Date.now()
  log(`${title}: injecting`)
  try {
    await steps.inject()
  } catch (error) {
    failures.push(`inject: ${String((error as Error).message).slice(0, 300)}`)
  }
  const injected = Date.now()
  try {
    await steps.recover()
  } catch (error) {
    failures.push(`recover: ${String((error as Error).message).slice(0, 300)}`)
  }
  const recoveredAt = Date.now()
  log(
    `${title}: recovered after ${((recoveredAt - injectAt) / 1000).toFixed(1)} s, waiting for full service`
  )

  // Full service: STEADY_MS in which every attempt ended in success (at most 90 s of waiting).
  const deadline = Date.now() + 90_000
  for (;;) {
    await sleep(1000)
    const now = Date.now()
    const recent = load.between(now - STEADY_MS, now)
    const lastBad = lastNotOk(load.between(injectAt, now))
    if (
      recent.length > 0 &&
      recent.every((a) => a.class === 'ok') &&
      (lastBad === undefined || now - lastBad >= STEADY_MS)
    ) {
      break
    }
    if (now > deadline) {
      failures.push('no full service within 90 s of the recovery')
      break
    }
  }
  const window = load.between(injectAt, Date.now())
  const lastBad = lastNotOk(window)
  const refusedBuckets = new Set<number>()
  const count = { ok: 0, refused: 0, unanswered: 0, duplicate: 0, failed: 0 }
  for (const attempt of window) {
    count[attempt.class]++
    if (attempt.class === 'refused' || attempt.class === 'unanswered') {
      refusedBuckets.add(Math.max(0, Math.floor((attempt.startedAt - injectAt) / 1000)))
    }
  }
  const failed = window.filter((a) => a.class === 'failed')
  const figures: FaultFigures = {
    title,
    refusedSeconds: refusedBuckets.size,
    refused503: count.refused,
    unanswered: count.unanswered,
    failed: failed.length,
    fullServiceMs: lastBad === undefined ? 0 : lastBad - injectAt,
    failures,
  }
  const ms = window.filter((a) => a.class === 'ok').map((a) => a.endedAt - a.startedAt)
  report.add('fault in place after', `${((injected - injectAt) / 1000).toFixed(1)} s`)
  report.add('component back after', `${((recoveredAt - injectAt) / 1000).toFixed(1)} s`)
  report.add(
    'attempts in the window',
    `${window.length}: ${count.ok} success (p50 ${percentile(ms, 50)} ms, p95 ${percentile(ms, 95)} ms, max ${ms.length ? Math.max(...ms) : 0} ms), ${count.refused} 503 service-unavailable, ${count.unanswered} unanswered (retried), ${count.duplicate} 409 on a retry, ${count.failed} other failures`
  )
  report.add(
    'seconds of refused requests',
    `${figures.refusedSeconds} s (503 or unanswered; target ≤ ${REFUSED_SECONDS_TARGET} s)${refusedBuckets.size ? ` from +${Math.min(...refusedBuckets)} s to +${Math.max(...refusedBuckets) + 1} s` : ''}`
  )
  report.add('other failures', `${figures.failed}${failed.length ? `: ${summarise(failed)}` : ''}`)
  const unanswered = window.filter((a) => a.class === 'unanswered')
  if (unanswered.length) report.add('unanswered kinds', summarise(unanswered))
  const refused = window.filter((a) => a.class === 'refused')
  if (refused.length) report.add('503 kinds', summarise(refused))
  report.add(
    'time to full service',
    figures.fullServiceMs === undefined
      ? 'not reached'
      : `${(figures.fullServiceMs / 1000).toFixed(1)} s`
  )
  if (figures.refusedSeconds > REFUSED_SECONDS_TARGET) {
    failures.push(
      `${figures.refusedSeconds} s of refused requests (target ≤ ${REFUSED_SECONDS_TARGET})`
    )
  }
  if (figures.failed > 0) failures.push(`${figures.failed} other failures: ${summarise(failed)}`)
  report.add('result', failures.length === 0 ? 'PASS' : `FAIL: ${failures.join('; ')}`)
  report.print()
  return figures
}

function lastNotOk(attempts: Attempt[]) {
  const bad = attempts.filter((a) => a.class !== 'ok')
  return bad.length ? Math.max(...bad.map((a) => a.endedAt)) : undefined
}

function summarise(attempts: Attempt[]) {
  const kinds = new Map<string, number>()
  for (const attempt of attempts) {
    const key = `${attempt.kind}: ${attempt.detail.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, '<id>').slice(0, 90)}`
    kinds.set(key, (kinds.get(key) ?? 0) + 1)
  }
  return [...kinds.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 4)
    .map(([key, n]) => `${n}× ${key}`)
    .join('; ')
}
