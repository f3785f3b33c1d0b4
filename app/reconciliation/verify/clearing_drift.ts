import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import { GATEWAY_OWNER } from '#ledger/accounts'
import { formatThb } from '#core/money'
import { POSTED, sum } from '#reconciliation/verify/sql'
import type {
  CheckScope,
  ClearingBalances,
  LineTotal,
  OpenReceivableItem,
  OpenTransferItem,
  Problem,
} from '#reconciliation/verify/types'

/**
 * The clearing accounts hold exactly the open items listed, nothing else:
 * deposit_clearing the unclaimed credit lines (clearing_drift),
 * deposit_receivable the open receivables (receivable_drift),
 * payout_clearing the transfers waiting for their debit line less the
 * unexplained debits (payout_clearing_drift). The accounts are the whole
 * database's: the drifts are checked unscoped only.
 */

/** The credit lines no claim takes (the scope's), and what the clearing accounts hold. */
export async function readClearing(
  trx: TransactionClientContract,
  scope: CheckScope | undefined
): Promise<{ unclaimed: LineTotal; clearing: ClearingBalances }> {
  const byAccount = scope ? ' AND l.deposit_account_id = ?' : ''
  const [[unclaimedRow]] = await trx.rawQuery(
    // A payout's return is claimed (the line is taken once), but no posting
    // moves its money out of deposit_clearing: the payout's hold went back to
    // the merchant from its own balance. It is counted with the credits no
    // claim took, as the money clearing holds (docs/decisions.md, "A payout's
    // return claims its line").
    `SELECT COUNT(*) AS line_count, COALESCE(SUM(l.amount), 0) AS amount FROM statement_lines l
      LEFT JOIN receipt_claims c ON c.statement_line_id = l.id
      WHERE l.direction = 'credit' AND (c.id IS NULL OR c.path = 'payout_return')
        AND ${POSTED('l')}${byAccount}`,
    scope ? [scope.depositAccountId] : []
  )
  const unclaimed = { lines: Number(unclaimedRow.line_count), amount: sum(unclaimedRow.amount) }
  const balances = await trx
    .from('ledger_entries as e')
    .join('ledger_accounts as a', 'a.id', 'e.account_id')
    .where('a.owner', GATEWAY_OWNER)
    .whereIn('a.code', ['deposit_clearing', 'deposit_receivable', 'payout_clearing'])
    .groupBy('a.code')
    .select('a.code')
    .sum('e.amount as total')
  const balanceOf = (code: string) => sum(balances.find((row) => row.code === code)?.total)
  return {
    unclaimed,
    clearing: {
      deposit: balanceOf('deposit_clearing'),
      receivable: balanceOf('deposit_receivable'),
      payout: balanceOf('payout_clearing'),
    },
  }
}

/** deposit_clearing against the unclaimed lines, deposit_receivable against the open receivables. */
export function checkDepositClearing(
  clearing: ClearingBalances,
  unclaimed: LineTotal,
  openReceivables: OpenReceivableItem[]
): Problem[] {
  const problems: Problem[] = []
  const owed = openReceivables.reduce((total, item) => total + item.amount, 0)
  if (clearing.deposit !== unclaimed.amount) {
    problems.push({
      kind: 'clearing_drift',
      detail: `deposit_clearing holds ${formatThb(clearing.deposit)} THB; the ${unclaimed.lines} unclaimed credit lines are ${formatThb(unclaimed.amount)} THB`,
    })
  }
  if (clearing.receivable !== -owed) {
    problems.push({
      kind: 'receivable_drift',
      detail: `deposit_receivable holds ${formatThb(-clearing.receivable)} THB; the ${openReceivables.length} open receivables are ${formatThb(owed)} THB`,
    })
  }
  return problems
}

/** payout_clearing against the transfers waiting for their debit line and the unexplained debits. */
export function checkPayoutClearing(
  clearing: ClearingBalances,
  openTransfers: OpenTransferItem[],
  unexplained: LineTotal
): Problem[] {
  const waiting = openTransfers.reduce((total, item) => total + item.amount, 0)
  if (clearing.payout === waiting - unexplained.amount) return []
  return [
    {
      kind: 'payout_clearing_drift',
      detail: `payout_clearing holds ${formatThb(clearing.payout)} THB; the ${openTransfers.length} transfers waiting for their debit line are ${formatThb(waiting)} THB and the ${unexplained.lines} unexplained debits ${formatThb(unexplained.amount)} THB`,
    },
  ]
}
