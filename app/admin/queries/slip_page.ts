import { DateTime } from 'luxon'
import PaymentSlip from '#slips/models/payment_slip'
import PaymentOrder from '#payments/models/payment_order'
import ApprovalRequest, { pendingKeyOf } from '#approvals/models/approval_request'
import Operator from '#operators/models/operator'
import { assignmentsOf } from '#review/assignments'
import { statementLinesCarrying } from '#slips/forensics'
import { linesNear } from '#admin/queries/slip_queue'

/**
 * What one slip's decision page reads: the slip and its order (merchant and
 * deposit account), the statement lines carrying its transfer reference,
 * the credits near its transfer time (or its upload), the request to mark
 * the order paid that waits, who holds the slip and who decided it. Null
 * for an id that names no slip.
 */
export async function slipPageRecords(id: string) {
  const slip = /^\d{1,18}$/.test(id) ? await PaymentSlip.find(id) : null
  if (!slip) return null
  const order = await PaymentOrder.query()
    .where('id', slip.paymentOrderId)
    .preload('merchant')
    .preload('depositAccount')
    .firstOrFail()
  const live = await statementLinesCarrying([slip.transRef])
  const facts = ((slip.verification ?? {}) as Record<string, any>).facts
  const transferredAt =
    typeof facts?.transferred_at === 'string' ? DateTime.fromISO(facts.transferred_at) : null
  const byTransferTime = Boolean(transferredAt?.isValid)
  const around = byTransferTime ? transferredAt!.toJSDate() : slip.createdAt.toJSDate()
  const lines = await linesNear(order.depositAccountId, around, order.transferAmount)
  const pending = await ApprovalRequest.query()
    .where('pending_key', pendingKeyOf('mark_paid', { type: 'payment', id: order.platformOrderId }))
    .first()
  const holder = (await assignmentsOf('slips', [slip.id])).get(String(slip.id)) ?? null
  const reviewer = slip.reviewedBy ? await Operator.find(slip.reviewedBy) : null
  return { slip, order, live, around, byTransferTime, lines, pending, holder, reviewer }
}
