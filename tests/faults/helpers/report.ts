import type { ApiResponse } from '#tests/faults/helpers/client'

export function percentile(values: number[], p: number) {
  if (values.length === 0) return 0
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
}

/** requests, p50/p95/max latency and the answers by status / error identifier. */
export function latencySummary(responses: ApiResponse[]) {
  const ms = responses.map((response) => response.ms)
  const outcomes: Record<string, number> = {}
  for (const response of responses) {
    const key =
      response.status === 0
        ? `no answer (${response.error})`
        : response.json?.success === true
          ? `${response.status}`
          : `${response.status} ${response.json?.error ?? (response.truncated ? 'cut off' : 'not JSON')}`
    outcomes[key] = (outcomes[key] ?? 0) + 1
  }
  return {
    requests: responses.length,
    p50: percentile(ms, 50),
    p95: percentile(ms, 95),
    max: ms.length ? Math.max(...ms) : 0,
    outcomes,
  }
}

export function formatOutcomes(outcomes: Record<string, number>) {
  return Object.entries(outcomes)
    .sort((a, b) => b[1] - a[1])
    .map(([key, n]) => `${key}: ${n}`)
    .join(', ')
}

/**
 * A scenario's figures, printed as a two-column table when the scenario ends
 * (whether it passed or not) so that a run's output can be compared.
 */
export class ScenarioReport {
  rows: Array<[string, string]> = []
  readonly started = Date.now()

  constructor(readonly title: string) {}

  add(label: string, value: unknown) {
    this.rows.push([label, typeof value === 'string' ? value : JSON.stringify(value)])
  }

  addLatency(label: string, responses: ApiResponse[]) {
    const summary = latencySummary(responses)
    this.add(
      label,
      `${summary.requests} requests, p50 ${summary.p50} ms, p95 ${summary.p95} ms, max ${summary.max} ms; ${formatOutcomes(summary.outcomes)}`
    )
    return summary
  }

  print() {
    this.add('scenario time', `${((Date.now() - this.started) / 1000).toFixed(1)} s`)
    const width = Math.max(...this.rows.map(([label]) => label.length))
    const lines = this.rows.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`)
    console.log(`\n┌ ${this.title}\n${lines.join('\n')}\n└`)
  }
}
