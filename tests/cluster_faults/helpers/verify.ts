import type { Target } from '#tests/cluster_faults/helpers/target'

/** The last line of a `--json` command, or the tail of its output when it is not JSON. */
async function verify(target: Target, command: string, describe: (parsed: any) => string) {
  const result = await target.ace([command, '--json'])
  let summary = ''
  try {
    summary = describe(JSON.parse(result.stdout.trim().split('\n').pop()!))
  } catch {
    summary = (result.stdout + result.stderr).trim().split('\n').slice(-5).join(' | ')
  }
  return { ok: result.code === 0, summary }
}

/** `ledger:verify --json` against the topology (tests/faults/helpers/invariants.ts, through HAProxy). */
export function ledgerVerify(target: Target) {
  return verify(target, 'ledger:verify', (parsed) =>
    parsed.ok
      ? `${parsed.transactions} transactions, no drift`
      : parsed.drifts.map((drift: { detail: string }) => drift.detail).join('; ')
  )
}

/** `reconcile:verify --json`: the ledger against the bank statements. */
export function reconcileVerify(target: Target) {
  return verify(target, 'reconcile:verify', (parsed) =>
    parsed.ok
      ? `${parsed.days.length} account-days, ${parsed.openReceivables.length} open receivables, ${parsed.openTransfers.length} transfers waiting`
      : parsed.problems.map((problem: { detail: string }) => problem.detail).join('; ')
  )
}
