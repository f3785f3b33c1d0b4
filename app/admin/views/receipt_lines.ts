import db from '@adonisjs/lucid/services/db'
import { formatThb } from '#core/money'
import { formatGatewayDateTime } from '#core/clock'

/**
 * Statement lines as the bank-receipt panels show them, linked to their
 * page, and the slips that carry a line's transfer reference. Read only,
 * without locks (docs/reconciliation.md, "Bank money in the ledger").
 */

/** A statement line as the bank-receipt panels show it, linked to its page. */
export interface ReceiptLineView {
  id: number
  href: string
  deposit_account_id: number
  direction: string
  amount: string
  amount_satang: number
  time: string | null
  status: string
  reference: string | null
  trans_ref: string | null
}

export function receiptLineView(row: Record<string, any>): ReceiptLineView {
  return {
    id: Number(row.id),
    href: `/admin/review/lines/${row.id}`,
    deposit_account_id: Number(row.deposit_account_id),
    direction: row.direction,
    amount: formatThb(Number(row.amount)),
    amount_satang: Number(row.amount),
    time: formatGatewayDateTime(row.line_at),
    status: row.status,
    reference: row.reference ?? null,
    trans_ref: row.trans_ref ?? null,
  }
}

/** A statement line as the bank-receipt panels show it, or null. */
export async function receiptLineOf(id: number | null) {
  if (id === null) return null
  const row = await db.from('statement_lines').where('id', id).first()
  return row ? receiptLineView(row) : null
}

/**
 * The slips whose transaction reference is this line's, of any order: the
 * slip, its order (and whether it was to be paid on this line's account),
 * the verification and the review decision.
 */
export async function slipsOfLine(transRef: string | null, depositAccountId: number) {
  if (!transRef) return []
  const rows = await db
    .from('payment_slips as s')
    .join('payment_orders as o', 'o.id', 's.payment_order_id')
    .join('merchants as m', 'm.id', 's.merchant_id')
    .leftJoin('operators as op', 'op.id', 's.reviewed_by')
    .where('s.trans_ref', transRef)
    .orderBy('s.id')
    .limit(20)
    .select(
      's.id',
      's.source',
      's.created_at',
      's.verification_status',
      's.verification_msg',
      's.review_decision',
      's.review_reason_code',
      's.reviewed_at',
      's.reviewed_by',
      'op.email as reviewer',
      'o.platform_order_id',
      'o.status as order_status',
      'o.deposit_account_id',
      'm.merchant_id'
    )
  return rows.map((row) => ({
    id: Number(row.id),
    href: `/admin/review/slips/${row.id}`,
    source: row.source as string,
    uploaded: formatGatewayDateTime(row.created_at),
    verification_status: row.verification_status as string,
    verification_msg: row.verification_msg as string,
    review_decision: (row.review_decision as string | null) ?? null,
    review_reason_code: (row.review_reason_code as string | null) ?? null,
    reviewed_at: formatGatewayDateTime(row.reviewed_at),
    reviewer:
      (row.reviewer as string | null) ?? (row.reviewed_by ? `operator ${row.reviewed_by}` : null),
    platform_order_id: row.platform_order_id as string,
    order_href: `/admin/orders/${row.platform_order_id}`,
    order_status: row.order_status as string,
    merchant_id: row.merchant_id as string,
    other_account: Number(row.deposit_account_id) !== depositAccountId,
  }))
}
