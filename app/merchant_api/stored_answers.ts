import type { HttpContext } from '@adonisjs/core/http'
import db from '@adonisjs/lucid/services/db'
import PaymentOrder from '#payments/models/payment_order'
import PayoutOrder from '#payouts/models/payout_order'
import PaymentSlip from '#slips/models/payment_slip'
import Platform from '#merchants/models/platform'
import { sendSerialized, successBody } from '#merchant_api/envelope'
import { presentCreatedPayment } from '#merchant_api/presenters/payment_presenter'
import {
  presentCreatedSettlement,
  presentCreatedWithdraw,
} from '#merchant_api/presenters/payout_presenter'
import { presentSlipUpload } from '#merchant_api/presenters/slip_presenter'
import type { RequestKey } from '#core/merchant_requests'

/**
 * The same request gets the same answer (docs/decisions.md): what a
 * state-changing request was answered is found by its key (merchant and the
 * signature of its exact bytes) and sent again, never executed twice. A
 * success is rebuilt from what it created (the create answers are its
 * order's fixed fields) or sent as it was kept (a slip upload, whose
 * verification may change later); a refusal is kept with its status and body.
 */

const KEY = (key: RequestKey) => ({ merchant_id: key.merchantId, signature: key.signature })

/** Answers that say "try again" are not kept: the same bytes are executed then. */
function isFinalRefusal(status: number) {
  return status >= 400 && status < 500 && status !== 429
}

/**
 * Sends the answer a request with this key was given, when there is one;
 * false when the request is new. Reads the committed row: a duplicate of a
 * request still running finds it once that request has committed (its
 * action's INSERT waited on the row's lock).
 */
export async function answerAgain(ctx: HttpContext, key: RequestKey): Promise<boolean> {
  const row = await db.from('merchant_requests').where(KEY(key)).first()
  if (!row) return false
  if (row.status !== null && row.body !== null) {
    sendSerialized(ctx, Number(row.status), row.body)
    return true
  }
  const body = await rebuild(row.order_type, {
    id: row.order_id === null ? null : Number(row.order_id),
    platformOrderId: row.platform_order_id,
  })
  if (!body) return false
  sendSerialized(ctx, 200, body)
  return true
}

/**
 * The success answer of what a request created, from the order or slip
 * itself: an order by the platform_order_id its request row names (rows
 * written before that column, by their order_id), a slip by its id.
 */
async function rebuild(
  orderType: string | null,
  created: { id: number | null; platformOrderId: string | null }
) {
  const { id: orderId, platformOrderId } = created
  if (orderId === null && platformOrderId === null) return null
  const orderKey =
    platformOrderId !== null ? { platform_order_id: platformOrderId } : { id: orderId! }
  if (orderType === 'payment') {
    const order = await PaymentOrder.query().where(orderKey).preload('depositAccount').first()
    if (!order) return null
    const platform = await Platform.cached(
      (await order.related('merchant').query().firstOrFail()).platformId
    )
    return successBody(presentCreatedPayment(order, platform, order.depositAccount))
  }
  if (orderType === 'withdraw' || orderType === 'settlement') {
    const order = await PayoutOrder.query().where(orderKey).first()
    if (!order) return null
    return successBody(
      order.kind === 'withdraw' ? presentCreatedWithdraw(order) : presentCreatedSettlement(order)
    )
  }
  if (orderType === 'slip' && orderId !== null) {
    const slip = await PaymentSlip.find(orderId)
    return slip
      ? successBody(presentSlipUpload({ slip, verificationMsg: slip.verificationMsg }))
      : null
  }
  return null
}

/** Keeps a success's answer as sent (once: a row without one). */
export async function keepAnswer(key: RequestKey, status: number, body: string) {
  await db.from('merchant_requests').where(KEY(key)).whereNull('status').update({ status, body })
}

/**
 * Keeps the refusal a request was answered, as sent; false when the key was
 * taken meanwhile (the same bytes ran elsewhere: that answer stands, INSERT
 * IGNORE leaves it) or the answer is not a final refusal.
 */
export async function keepIfRefused(ctx: HttpContext, key: RequestKey) {
  const status = ctx.response.getStatus()
  const body = ctx.response.getBody()
  if (!isFinalRefusal(status) || typeof body !== 'string') return false
  const [result] = await db.rawQuery(
    `INSERT IGNORE INTO merchant_requests (merchant_id, signature, endpoint, status, body, created_at)
     VALUES (?, ?, ?, ?, ?, ?)`,
    [key.merchantId, key.signature, key.endpoint.slice(0, 40), status, body, new Date()]
  )
  return result.affectedRows === 1
}
