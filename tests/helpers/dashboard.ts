import db from '@adonisjs/lucid/services/db'
import type { DateTime } from 'luxon'
import { newPlatformOrderId } from '#core/order_ids'
import { v7 as uuidv7 } from 'uuid'
import type { TestMerchant } from '#tests/helpers/merchants'

/**
 * Rows for the dashboard's figures, inserted as the gateway writes them
 * (same columns and states), at chosen times: the actions always stamp
 * "now", and the dashboard is about the last 7 days.
 */

let sequence = 0

export type PaymentOutcome = 'open' | 'paid' | 'expired' | 'rejected' | 'freeze'

export async function insertPayment(
  who: TestMerchant,
  accountId: number,
  fields: {
    at: DateTime
    amount: number
    outcome: PaymentOutcome
    awaitingReview?: boolean
    updatedAt?: DateTime
  }
) {
  sequence += 1
  const at = fields.at.toUTC()
  const status = {
    open: 'open',
    paid: 'settled_paid',
    expired: 'error',
    rejected: 'error',
    freeze: 'freeze',
  }[fields.outcome]
  const [id] = await db.table('payment_orders').insert({
    platform_order_id: newPlatformOrderId(who.merchant.orderPrefix, 'P', at),
    uuid: uuidv7(),
    merchant_id: who.merchant.id,
    merchant_order_id: `DASH${sequence}`,
    payment_type: 'TRANSFER',
    channel: 'transfer',
    deposit_account_id: accountId,
    amount: fields.amount,
    transfer_amount: fields.amount,
    slot_amount: null,
    customer_bank: 'SCB',
    customer_account_name: 'Somchai Jaidee',
    customer_account_no: '1234567890',
    status,
    status_before_freeze: fields.outcome === 'freeze' ? 'settled_paid' : null,
    awaiting_review: fields.awaitingReview ?? false,
    error_reason:
      fields.outcome === 'expired' ? 'expired' : fields.outcome === 'rejected' ? 'rejected' : null,
    order_at: at.toJSDate(),
    expire_at: at.plus({ minutes: 15 }).toJSDate(),
    paid_at: fields.outcome === 'paid' ? at.plus({ minutes: 3 }).toJSDate() : null,
    created_at: at.toJSDate(),
    updated_at: (fields.updatedAt ?? at).toUTC().toJSDate(),
  })
  return Number(id)
}

export async function insertPayout(
  who: TestMerchant,
  fields: { at: DateTime; amount: number; status: 'pending' | 'success' | 'failed' | 'rejected' }
) {
  sequence += 1
  const at = fields.at.toUTC()
  await db.table('payout_orders').insert({
    platform_order_id: newPlatformOrderId(who.merchant.orderPrefix, 'W', at),
    merchant_id: who.merchant.id,
    kind: 'withdraw',
    merchant_order_id: `DASHW${sequence}`,
    amount: fields.amount,
    fee: 0,
    bank: 'KBANK',
    account_no: '5550000001',
    account_name: 'Somchai Jaidee',
    status: fields.status,
    hold_state:
      fields.status === 'success' ? 'consumed' : fields.status === 'pending' ? 'held' : 'returned',
    hold_expires_at: at.plus({ minutes: 10 }).toJSDate(),
    connector: 'sandbox',
    order_at: at.toJSDate(),
    done_at: fields.status === 'pending' ? null : at.plus({ minutes: 4 }).toJSDate(),
    created_at: at.toJSDate(),
    updated_at: at.toJSDate(),
  })
}

async function statementImport(accountId: number, at: DateTime) {
  const [id] = await db.table('statement_imports').insert({
    deposit_account_id: accountId,
    layout: 'neutral',
    file_name: 'statement.csv',
    file_sha256: '0'.repeat(64),
    line_count: 1,
    new_lines: 1,
    actor: 'test',
    created_at: at.toUTC().toJSDate(),
  })
  return Number(id)
}

/** A statement line: matched to a payment (at its line time, matched at matchedAt) or left open. */
export async function insertLine(
  accountId: number,
  fields: {
    lineAt: DateTime
    amount: number
    status: 'matched' | 'unmatched' | 'late'
    orderId?: number
    matchedAt?: DateTime
    importedAt?: DateTime
  }
) {
  sequence += 1
  const importedAt = fields.importedAt ?? fields.matchedAt ?? fields.lineAt
  await db.table('statement_lines').insert({
    deposit_account_id: accountId,
    import_id: await statementImport(accountId, importedAt),
    fingerprint: String(sequence).padStart(64, '0'),
    line_at: fields.lineAt.toUTC().toJSDate(),
    direction: 'credit',
    amount: fields.amount,
    status: fields.status,
    order_type: fields.orderId === undefined ? null : 'payment',
    order_id: fields.orderId ?? null,
    matched_at: fields.matchedAt?.toUTC().toJSDate() ?? null,
    created_at: importedAt.toUTC().toJSDate(),
  })
}

/** A callback of a payment and its delivery attempts (HTTP status each; null: no answer). */
export async function insertCallback(
  who: TestMerchant,
  fields: {
    at: DateTime
    state: 'pending' | 'delivered' | 'failed'
    attempts: Array<number | null>
  }
) {
  sequence += 1
  const at = fields.at.toUTC()
  const [id] = await db.table('callback_outbox').insert({
    merchant_id: who.merchant.id,
    order_type: 'payment',
    order_id: 900_000 + sequence,
    platform_order_id: newPlatformOrderId(who.merchant.orderPrefix, 'P', at),
    status: 'success',
    notify_url: 'https://merchant.example/callback',
    body: '{}',
    state: fields.state,
    attempts: fields.attempts.length,
    delivered_at: fields.state === 'delivered' ? at.toJSDate() : null,
    created_at: at.toJSDate(),
  })
  for (const [index, status] of fields.attempts.entries()) {
    await db.table('callback_attempts').insert({
      callback_outbox_id: Number(id),
      series: 0,
      attempt: index + 1,
      job_id: String(id),
      http_status: status,
      latency_ms: 50,
      error: status === 200 ? null : 'refused',
      created_at: at.plus({ seconds: index * 30 }).toJSDate(),
    })
  }
}

/** A slip on a payment (undecided unless `decision`). */
export async function insertSlip(
  who: TestMerchant,
  orderId: number,
  fields: { at: DateTime; decision?: 'approved' | 'rejected' }
) {
  sequence += 1
  const at = fields.at.toUTC().toJSDate()
  await db.table('payment_slips').insert({
    payment_order_id: orderId,
    merchant_id: who.merchant.id,
    source: 'payment_page',
    storage_key: `slips/dashboard-${sequence}.jpg`,
    sha256: String(sequence).padStart(64, 'a'),
    byte_size: 1000,
    mime: 'image/jpeg',
    verification_status: 'failed',
    verification_msg: 'amount mismatch',
    verification: '{}',
    checked_at: at,
    review_decision: fields.decision ?? null,
    reviewed_at: fields.decision ? at : null,
    created_at: at,
    updated_at: at,
  })
}

export async function insertApprovalRequest(fields: {
  at: DateTime
  status: 'pending' | 'approved'
}) {
  sequence += 1
  const at = fields.at.toUTC()
  await db.table('approval_requests').insert({
    kind: 'mark_paid',
    target_type: 'payment_order',
    target_id: `DASH${sequence}`,
    action: 'markPaymentPaid',
    input: '{}',
    amount: 100_000,
    requested_by_actor: 'test',
    status: fields.status,
    pending_key: fields.status === 'pending' ? `dashboard-${sequence}` : null,
    expires_at: at.plus({ days: 3 }).toJSDate(),
    created_at: at.toJSDate(),
    updated_at: at.toJSDate(),
  })
}

/** An open receivable: a payment credited at `at` whose bank line has not arrived. */
export async function insertReceivable(
  who: TestMerchant,
  accountId: number,
  orderId: number,
  fields: { at: DateTime; amount: number }
) {
  const at = fields.at.toUTC().toJSDate()
  await db.table('receipt_claims').insert({
    deposit_account_id: accountId,
    statement_line_id: null,
    payment_order_id: orderId,
    merchant_id: who.merchant.id,
    path: 'mark_paid',
    amount_policy: 'exact',
    expected_amount: fields.amount,
    credited: fields.amount,
    fee: 0,
    expected_from: at,
    expected_to: at,
    actor: 'operator:ops@example.com',
    claimed_at: at,
  })
}
