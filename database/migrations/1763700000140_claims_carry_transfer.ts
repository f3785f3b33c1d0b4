import { BaseSchema } from '@adonisjs/lucid/schema'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import { binaryCollation } from '#database/collation'

/**
 * Every claim carries the bank transfer it took (docs/reconciliation.md,
 * "One transfer, one line"): a claim on a statement line holds the line's
 * bank reference in receipt_claims.trans_ref, so one transfer is claimed
 * once across all deposit accounts, whether a line or a slip names it.
 *
 * - The unique key moves to held_trans_ref, trans_ref while the claim is
 *   not reversed: a receivable taken back (its line never came) no longer
 *   holds its slip's transfer, so the line that arrives after all can still
 *   be credited or returned.
 * - Late credits of the version before 101 that it left without a claim (a
 *   line attached to an expired order stayed `unmatched`; 101 read `late`
 *   lines only, and a second late credit of one order was dropped on the
 *   order's key) become claims: reconcile:verify reported them as
 *   unbacked_credit, line_given_unclaimed and clearing_drift, and no action
 *   can decide a line already decided.
 * - Claims on a line get the line's bank reference. Where another claim
 *   already holds it (one transfer credited twice before this version) they
 *   are not merged: the first keeps it and each pair is reported, for an
 *   operator.
 *
 * Written in SQL of its own, not with the application's code, so that it
 * stays what it was when later versions change that code.
 */
export default class extends BaseSchema {
  async up() {
    this.defer(async (db) => {
      const collation = await binaryCollation(db)
      await db.rawQuery(
        `ALTER TABLE receipt_claims
           ADD COLUMN held_trans_ref VARCHAR(64) COLLATE ${collation}
             AS (IF(reversed_at IS NULL, trans_ref, NULL)) PERSISTENT,
           DROP INDEX receipt_claims_trans_ref_unique,
           ADD UNIQUE receipt_claims_held_trans_ref_unique (held_trans_ref),
           ADD INDEX receipt_claims_trans_ref_index (trans_ref)`
      )
      for (const warning of await claimsCarryTransfers(db)) console.warn(warning)
    })
  }

  async down() {
    this.defer(async (db) => {
      await db.rawQuery(
        `ALTER TABLE receipt_claims
           DROP INDEX receipt_claims_held_trans_ref_unique,
           DROP INDEX receipt_claims_trans_ref_index,
           DROP COLUMN held_trans_ref,
           ADD UNIQUE receipt_claims_trans_ref_unique (trans_ref)`
      )
    })
  }
}

/** The bank's transaction reference of line `l` (a trans_ref that only copies the reference is ours). */
const BANK_REF = `CASE WHEN l.trans_ref IS NOT NULL
  AND (l.transfer_key LIKE 'ref|%' OR NOT (l.reference <=> l.trans_ref)) THEN l.trans_ref END`

/**
 * The backfill (idempotent): legacy late credits claimed, claims on lines
 * given their line's bank reference. Returns what it could not do, one
 * sentence per claim, for an operator.
 */
export async function claimsCarryTransfers(db: QueryClientContract): Promise<string[]> {
  await claimLegacyLateCredits(db)

  // The first claim of each transfer takes it, unless a claim already holds it.
  await db.rawQuery(
    `UPDATE receipt_claims c
       JOIN (SELECT c.id, ${BANK_REF} AS bank_ref,
                    ROW_NUMBER() OVER (PARTITION BY ${BANK_REF} ORDER BY c.id) AS nth,
                    (SELECT h.id FROM receipt_claims h WHERE h.held_trans_ref = ${BANK_REF} LIMIT 1) AS holder
               FROM receipt_claims c JOIN statement_lines l ON l.id = c.statement_line_id
              WHERE c.trans_ref IS NULL AND ${BANK_REF} IS NOT NULL) AS k
         ON k.id = c.id AND k.nth = 1 AND k.holder IS NULL
        SET c.trans_ref = k.bank_ref`
  )

  const [left] = await db.rawQuery(
    `SELECT c.id, c.statement_line_id, c.trans_ref, ${BANK_REF} AS bank_ref,
            h.id AS holder_id, h.statement_line_id AS holder_line_id
       FROM receipt_claims c
       JOIN statement_lines l ON l.id = c.statement_line_id
       LEFT JOIN receipt_claims h ON h.held_trans_ref = ${BANK_REF} AND h.id <> c.id
      WHERE ${BANK_REF} IS NOT NULL AND NOT (c.trans_ref <=> ${BANK_REF})
      ORDER BY c.id`
  )
  return (left as Array<Record<string, any>>).map((row) => {
    const line = `claim ${row.id} (statement line #${row.statement_line_id})`
    const holder =
      row.holder_id === null
        ? null
        : `claim ${row.holder_id} (${row.holder_line_id === null ? 'a receivable' : `statement line #${row.holder_line_id}`})`
    if (row.trans_ref !== null) {
      return (
        `${line} names the slip's transfer ${row.trans_ref}, but its line is the transfer ${row.bank_ref}` +
        (holder ? `, which ${holder} holds` : '') +
        ': check how it was decided'
      )
    }
    return holder
      ? `${holder} and ${line} are one transfer ${row.bank_ref}, credited twice: ${holder} keeps it; check how the other was decided`
      : `${line} could not take its transfer ${row.bank_ref}`
  })
}

/**
 * Lines an operator attached to an expired order before 101 (the posting
 * payment_late:statement_line:<id>, the line left unmatched or late, its
 * decision `attached`) that no claim takes: claimed as 101 claims late
 * credits (path late_credit), or, where another claim holds the order
 * (the order credited late twice), as path upgrade without the order.
 */
async function claimLegacyLateCredits(db: QueryClientContract) {
  const [lines] = await db.rawQuery(
    `SELECT l.id, l.deposit_account_id, l.amount, l.payment_order_id,
            COALESCE(l.merchant_id, o.merchant_id) AS merchant_id, l.decided_by_actor, l.decided_at,
            o.amount AS order_amount, t.id AS posting_id,
            EXISTS (SELECT 1 FROM receipt_claims k WHERE k.payment_order_id = l.payment_order_id) AS order_claimed
       FROM statement_lines l
       LEFT JOIN payment_orders o ON o.id = l.payment_order_id
       LEFT JOIN ledger_transactions t ON t.idempotency_key = CONCAT('payment_late:statement_line:', l.id)
      WHERE l.direction = 'credit' AND l.decision = 'attached' AND l.status <> 'matched'
        AND t.id IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM receipt_claims c WHERE c.statement_line_id = l.id)
      ORDER BY l.id`
  )
  const now = new Date()
  for (const line of lines as Array<Record<string, any>>) {
    const fee = await feeOf(db, Number(line.posting_id))
    const ownsOrder = Number(line.order_claimed) === 0
    await db.rawQuery(
      `INSERT IGNORE INTO receipt_claims (deposit_account_id, statement_line_id, payment_order_id,
         merchant_id, path, amount_policy, expected_amount, received_amount, credited, fee,
         ledger_transaction_id, actor, claimed_at, cleared_at)
       VALUES (?, ?, ?, ?, ?, 'exact', ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        line.deposit_account_id,
        line.id,
        ownsOrder ? line.payment_order_id : null,
        line.merchant_id,
        ownsOrder ? 'late_credit' : 'upgrade',
        Number(line.amount),
        Number(line.amount),
        Number(line.order_amount ?? line.amount) - fee,
        fee,
        line.posting_id,
        line.decided_by_actor ?? 'system',
        line.decided_at ?? now,
        line.decided_at ?? now,
      ]
    )
  }
}

/** The fee a posting earned (its fee_revenue entry), satang. */
async function feeOf(db: QueryClientContract, transactionId: number) {
  const [rows] = await db.rawQuery(
    `SELECT COALESCE(SUM(e.amount), 0) AS fee FROM ledger_entries e
       JOIN ledger_accounts a ON a.id = e.account_id
      WHERE e.transaction_id = ? AND a.owner = 'gateway' AND a.code = 'fee_revenue'`,
    [transactionId]
  )
  return Number(rows[0].fee)
}
