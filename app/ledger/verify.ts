import db from '@adonisjs/lucid/services/db'
import { MERCHANT_ACCOUNTS, type MerchantAccountCode } from '#ledger/accounts'
import type { Actor } from '#core/actor'

export interface LedgerDrift {
  kind: 'unbalanced_transaction' | 'projection_drift'
  detail: string
}

/**
 * Checks the two invariants of the ledger: every transaction's entries sum to
 * zero, and each merchant's balance / freeze_balance / unsettle_balance equal
 * the sums of the entries of its available / frozen / unsettled accounts.
 * Reads in one consistent snapshot, so a busy gateway does not report drift
 * that is only a commit in flight.
 */
export async function verifyLedger(): Promise<{
  merchants: number
  transactions: number
  drifts: LedgerDrift[]
}> {
  return db.transaction(
    async (trx) => {
      const drifts: LedgerDrift[] = []
      const unbalanced = await trx
        .from('ledger_entries')
        .groupBy('transaction_id')
        .select('transaction_id')
        .sum('amount as total')
        .havingRaw('SUM(amount) <> 0')
      for (const row of unbalanced) {
        drifts.push({
          kind: 'unbalanced_transaction',
          detail: `ledger transaction ${row.transaction_id} sums to ${row.total}`,
        })
      }

      const sums = await trx
        .from('ledger_entries')
        .join('ledger_accounts', 'ledger_accounts.id', 'ledger_entries.account_id')
        .whereNotNull('ledger_accounts.merchant_id')
        .groupBy('ledger_accounts.merchant_id', 'ledger_accounts.code')
        .select('ledger_accounts.merchant_id', 'ledger_accounts.code')
        .sum('ledger_entries.amount as total')
      const expected = new Map<number, Record<string, bigint>>()
      for (const row of sums) {
        const entry = expected.get(row.merchant_id) ?? {}
        entry[MERCHANT_ACCOUNTS[row.code as MerchantAccountCode]] = BigInt(row.total)
        expected.set(row.merchant_id, entry)
      }

      // From merchants, not from merchant_balances: a deleted projection row is drift too.
      const balances = await trx
        .from('merchants')
        .leftJoin('merchant_balances', 'merchants.id', 'merchant_balances.merchant_id')
        .select(
          'merchants.id as merchant_id',
          'merchants.merchant_id as public_id',
          'merchant_balances.merchant_id as projected_for',
          'merchant_balances.balance',
          'merchant_balances.freeze_balance',
          'merchant_balances.unsettle_balance'
        )
      for (const row of balances) {
        const want = expected.get(row.merchant_id) ?? {}
        if (row.projected_for === null) {
          drifts.push({
            kind: 'projection_drift',
            detail: `merchant ${row.public_id} has no balance row`,
          })
          continue
        }
        for (const column of Object.values(MERCHANT_ACCOUNTS)) {
          const projected = BigInt(row[column])
          const fromEntries = want[column] ?? 0n
          if (projected !== fromEntries) {
            drifts.push({
              kind: 'projection_drift',
              detail: `merchant ${row.public_id}: ${column} is ${projected} satang, entries sum to ${fromEntries}`,
            })
          }
        }
      }
      const [[{ total }]] = await trx.rawQuery('SELECT COUNT(*) AS total FROM ledger_transactions')
      return { merchants: balances.length, transactions: Number(total), drifts }
    },
    { isolationLevel: 'repeatable read' }
  )
}

/**
 * verifyLedger, recorded (ledger_verify_runs) for monitoring: the worker's
 * daily run and the command's. Returns the result.
 */
export async function runLedgerCheck(actor: Actor) {
  const result = await verifyLedger()
  await db.table('ledger_verify_runs').insert({
    drifts: result.drifts.length,
    transactions: result.transactions,
    merchants: result.merchants,
    result: JSON.stringify({ drifts: result.drifts.slice(0, 50) }),
    actor: actor.name.slice(0, 120),
    created_at: new Date(),
  })
  return result
}
