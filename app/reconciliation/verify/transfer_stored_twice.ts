import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import { BANK_REFERENCE, POSTED } from '#reconciliation/verify/sql'
import type { CheckScope, Problem } from '#reconciliation/verify/types'

/**
 * One bank transfer, one line (docs/reconciliation.md, "One transfer, one
 * line"). transfer_key is unique, but lines stored before it (migration
 * …130 left the second of a pair without a key) or written around it are
 * not: two lines of one direction and bank reference, on any accounts, are
 * one transfer stored twice. Starts from the few lines without a key and
 * reaches the others through indexes.
 */
export async function checkTransfersStoredOnce(
  trx: TransactionClientContract,
  scope: CheckScope | undefined
): Promise<Problem[]> {
  const onAccount = scope ? ' AND (l.deposit_account_id = ? OR m.deposit_account_id = ?)' : ''
  const [pairs] = await trx.rawQuery(
    `SELECT l.id, l.deposit_account_id, l.direction, l.trans_ref,
            m.id AS other_id, m.deposit_account_id AS other_account
       FROM statement_lines l
       JOIN statement_lines m ON m.trans_ref = l.trans_ref AND m.direction = l.direction
        AND m.id <> l.id AND ${BANK_REFERENCE('m')} AND ${POSTED('m')}
      WHERE l.transfer_key IS NULL AND ${BANK_REFERENCE('l')} AND ${POSTED('l')}${onAccount}`,
    scope ? [scope.depositAccountId, scope.depositAccountId] : []
  )
  const transfers = new Map<
    string,
    { direction: string; ref: string; lines: Map<number, number> }
  >()
  for (const row of pairs as Array<Record<string, any>>) {
    const name = `${row.direction}|${row.trans_ref}`
    const transfer = transfers.get(name) ?? {
      direction: row.direction,
      ref: row.trans_ref,
      lines: new Map<number, number>(),
    }
    transfers.set(name, transfer)
    transfer.lines.set(Number(row.id), Number(row.deposit_account_id))
    transfer.lines.set(Number(row.other_id), Number(row.other_account))
  }
  return [...transfers.values()].map((transfer) => {
    const ids = [...transfer.lines.keys()].sort((a, b) => a - b)
    const named = ids.map((id) => `#${id} (deposit account ${transfer.lines.get(id)})`)
    return {
      kind: 'transfer_stored_twice' as const,
      detail:
        `statement lines ${named.slice(0, -1).join(', ')} and ${named.at(-1)} are one ${transfer.direction} ` +
        `transfer, the bank's ${transfer.ref}: the bank moved its money once; check how each line was decided`,
      depositAccountId: transfer.lines.get(ids[0]),
    }
  })
}
