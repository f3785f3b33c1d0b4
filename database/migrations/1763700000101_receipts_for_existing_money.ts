import { BaseSchema } from '@adonisjs/lucid/schema'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'

/**
 * An installation that ran before bank money was in the ledger gets it
 * now, from what its tables already say, without changing any posting it
 * made (docs/reconciliation.md, "Upgrading"). Adds only:
 *
 * 1. trans_ref of existing lines (their reference; the sandbox bank's
 *    transfers from their description), paid_amount of paid orders;
 * 2. one bank posting per deposit account and bank day of the lines already
 *    imported (key bank_statement:upgrade:<account>:<day>);
 * 3. a claim for every line the matcher or an operator gave away: matched
 *    to a payment, attached late, credited to a merchant, returned;
 * 4. an open receivable for every payment credited without a line (marked
 *    paid, slip approved), with the posting that moves its money from
 *    deposit_clearing to deposit_receivable.
 *
 * reconcile:verify then reports what does not fit: those receivables, once
 * past the window, and any credit or given-away line the upgrade could not
 * pair (a line credited twice before the upgrade is one). Written in SQL of
 * its own, not with the application's code, so that it stays what it was
 * when later versions change that code.
 */
export default class extends BaseSchema {
  async up() {
    this.defer(async (db) => {
      await upgradeReceipts(db)
    })
  }

  async down() {}
}

/** Idempotent: a second run finds every row it would add already there. */
export async function upgradeReceipts(db: QueryClientContract) {
  const now = new Date()
  const day = (column: string) => `DATE_FORMAT(${column} + INTERVAL 7 HOUR, '%Y-%m-%d')`

  // 1. Transaction references and paid amounts.
  await db.rawQuery(
    `UPDATE statement_lines l JOIN statement_imports i ON i.id = l.import_id
        SET l.trans_ref = SUBSTRING_INDEX(SUBSTRING(l.description, 18), ' ', 1)
      WHERE l.trans_ref IS NULL AND i.layout = 'sandbox' AND l.description LIKE 'SANDBOX TRANSFER %'`
  )
  await db.rawQuery(
    'UPDATE statement_lines SET trans_ref = reference WHERE trans_ref IS NULL AND reference IS NOT NULL'
  )
  await db.rawQuery(
    'UPDATE payment_orders SET paid_amount = amount WHERE paid_at IS NOT NULL AND paid_amount IS NULL'
  )

  // 2. The bank: each account's lines, per bank day, not yet posted by an import.
  const [days] = await db.rawQuery(
    `SELECT l.deposit_account_id, ${day('l.line_at')} AS day,
            SUM(CASE WHEN l.direction = 'credit' THEN l.amount ELSE 0 END) AS credits,
            SUM(CASE WHEN l.direction = 'debit' THEN l.amount ELSE 0 END) AS debits
       FROM statement_lines l
      WHERE NOT EXISTS (SELECT 1 FROM ledger_transactions t
                         WHERE t.kind = 'bank_statement' AND t.reference_type = 'statement_import'
                           AND t.reference_id = CAST(l.import_id AS CHAR))
      GROUP BY l.deposit_account_id, day`
  )
  for (const row of days as Array<Record<string, any>>) {
    const credits = Number(row.credits)
    const debits = Number(row.debits)
    const legs: Array<[string, number]> = []
    if (debits - credits !== 0) legs.push([`bank:${row.deposit_account_id}`, debits - credits])
    if (credits !== 0) legs.push(['deposit_clearing', credits])
    if (debits !== 0) legs.push(['payout_clearing', -debits])
    if (legs.length < 2) continue
    await post(db, {
      kind: 'bank_statement',
      referenceType: 'upgrade',
      referenceId: `${row.deposit_account_id}:${row.day}`,
      key: `bank_statement:upgrade:${row.deposit_account_id}:${row.day}`,
      description: `deposit account ${row.deposit_account_id}, ${row.day}: received and sent before the upgrade`,
      valueDate: row.day,
      legs,
      now,
    })
  }

  // 3. Lines given away, each claimed by what took it.
  const claim = (path: string, select: string) =>
    db.rawQuery(
      `INSERT IGNORE INTO receipt_claims (deposit_account_id, statement_line_id, trans_ref,
         payment_order_id, merchant_id, path, amount_policy, expected_amount, received_amount,
         credited, fee, slip_id, approval_request_id, ledger_transaction_id, actor, claimed_at,
         cleared_at)
       ${select.replace('{path}', `'${path}'`)}`
    )
  await claim(
    'match',
    `SELECT l.deposit_account_id, l.id, NULL, o.id, o.merchant_id,
            CASE WHEN l.decision = 'attached' THEN 'attach' ELSE {path} END, 'exact',
            l.amount, l.amount, o.paid_amount - COALESCE(o.fee, 0), COALESCE(o.fee, 0), NULL, NULL,
            (SELECT t.id FROM ledger_transactions t WHERE t.kind = 'payment_paid'
               AND t.reference_type = 'payment' AND t.reference_id = o.platform_order_id LIMIT 1),
            COALESCE(l.decided_by_actor, 'system'), COALESCE(l.matched_at, l.created_at),
            COALESCE(l.matched_at, l.created_at)
       FROM statement_lines l JOIN payment_orders o ON o.id = l.order_id
      WHERE l.direction = 'credit' AND l.status = 'matched' AND l.order_type = 'payment'`
  )
  // Operators' decisions on lines (few): each with its posting, found by its key.
  const [decided] = await db.rawQuery(
    `SELECT l.id, l.deposit_account_id, l.amount, l.decision, l.payment_order_id, l.merchant_id,
            l.decided_by_actor, l.decided_at, o.amount AS order_amount
       FROM statement_lines l LEFT JOIN payment_orders o ON o.id = l.payment_order_id
      WHERE l.direction = 'credit'
        AND (l.decision IN ('credited', 'returned') OR (l.decision = 'attached' AND l.status = 'late'))`
  )
  for (const line of decided as Array<Record<string, any>>) {
    const path =
      line.decision === 'credited'
        ? 'merchant_credit'
        : line.decision === 'returned'
          ? 'return'
          : 'late_credit'
    const posting =
      path === 'late_credit'
        ? await db
            .from('ledger_transactions')
            .where('idempotency_key', `payment_late:statement_line:${line.id}`)
            .first()
        : await db
            .from('ledger_transactions')
            .where('kind', path === 'return' ? 'statement_line_return' : 'statement_line_credit')
            .where('reference_type', 'statement_line')
            .where('reference_id', String(line.id))
            .first()
    const fee = posting ? await feeOf(db, Number(posting.id)) : 0
    const amount = Number(line.amount)
    const credited =
      path === 'return'
        ? 0
        : path === 'late_credit'
          ? Number(line.order_amount) - fee
          : amount - fee
    await db.rawQuery(
      `INSERT IGNORE INTO receipt_claims (deposit_account_id, statement_line_id, payment_order_id,
         merchant_id, path, amount_policy, expected_amount, received_amount, credited, fee,
         ledger_transaction_id, actor, claimed_at, cleared_at)
       VALUES (?, ?, ?, ?, ?, 'exact', ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        line.deposit_account_id,
        line.id,
        path === 'late_credit' ? line.payment_order_id : null,
        path === 'return' ? null : line.merchant_id,
        path,
        amount,
        amount,
        credited,
        fee,
        posting?.id ?? null,
        line.decided_by_actor ?? 'system',
        line.decided_at ?? now,
        line.decided_at ?? now,
      ]
    )
  }

  // 4. Payments credited without their line: open receivables.
  const [unpaired] = await db.rawQuery(
    `SELECT o.id, o.platform_order_id, o.deposit_account_id, o.merchant_id, o.transfer_amount,
            o.paid_amount, o.fee, o.order_at, o.paid_at, t.id AS posting_id,
            (SELECT s.id FROM payment_slips s WHERE s.payment_order_id = o.id
               AND s.review_decision = 'approved' ORDER BY s.id LIMIT 1) AS slip_id,
            (SELECT s.trans_ref FROM payment_slips s WHERE s.payment_order_id = o.id
               AND s.review_decision = 'approved' ORDER BY s.id LIMIT 1) AS trans_ref
       FROM ledger_transactions t
       JOIN payment_orders o ON o.platform_order_id = t.reference_id
      WHERE t.kind = 'payment_paid' AND t.reference_type = 'payment'
        AND NOT EXISTS (SELECT 1 FROM receipt_claims c WHERE c.payment_order_id = o.id)`
  )
  for (const order of unpaired as Array<Record<string, any>>) {
    const paidAt = new Date(order.paid_at ?? now)
    const [inserted] = await db.rawQuery(
      `INSERT IGNORE INTO receipt_claims (deposit_account_id, statement_line_id, trans_ref,
         payment_order_id, merchant_id, path, amount_policy, expected_amount, credited, fee,
         expected_from, expected_to, slip_id, ledger_transaction_id, actor, claimed_at)
       VALUES (?, NULL, ?, ?, ?, 'upgrade', 'exact', ?, ?, ?, ?, ?, ?, ?, 'upgrade', ?)`,
      [
        order.deposit_account_id,
        order.trans_ref,
        order.id,
        order.merchant_id,
        order.transfer_amount,
        Number(order.paid_amount) - Number(order.fee ?? 0),
        Number(order.fee ?? 0),
        new Date(new Date(order.order_at).getTime() - 60_000),
        new Date(paidAt.getTime() + 60_000),
        order.slip_id,
        order.posting_id,
        paidAt,
      ]
    )
    // A slip's transfer already claimed by another order: left unpaired, verify names the credit.
    if (Number(inserted.affectedRows) !== 1) continue
    await post(db, {
      kind: 'receivable_opened',
      referenceType: 'payment',
      referenceId: order.platform_order_id,
      key: `receivable_opened:upgrade:${order.platform_order_id}`,
      description: `${order.platform_order_id} was credited before its bank line (upgrade)`,
      valueDate: null,
      legs: [
        ['deposit_clearing', Number(order.transfer_amount)],
        ['deposit_receivable', -Number(order.transfer_amount)],
      ],
      now,
    })
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

/** One balanced gateway posting (INSERT IGNORE by its key: a second run adds nothing). */
async function post(
  db: QueryClientContract,
  posting: {
    kind: string
    referenceType: string
    referenceId: string
    key: string
    description: string
    valueDate: string | null
    legs: Array<[string, number]>
    now: Date
  }
) {
  const [result] = await db.rawQuery(
    `INSERT IGNORE INTO ledger_transactions (kind, reference_type, reference_id, idempotency_key,
       description, value_date, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
    [
      posting.kind,
      posting.referenceType,
      posting.referenceId.slice(0, 40),
      posting.key,
      posting.description.slice(0, 255),
      posting.valueDate,
      posting.now,
    ] as any[]
  )
  if (Number(result.affectedRows) !== 1) return
  const transactionId = Number(result.insertId)
  for (const [code, amount] of posting.legs) {
    await db.rawQuery(
      `INSERT IGNORE INTO ledger_accounts (merchant_id, owner, code, created_at) VALUES (NULL, 'gateway', ?, ?)`,
      [code, posting.now]
    )
    await db.rawQuery(
      `INSERT INTO ledger_entries (transaction_id, account_id, amount)
       SELECT ?, id, ? FROM ledger_accounts WHERE owner = 'gateway' AND code = ?`,
      [transactionId, amount, code]
    )
  }
}
