import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import env from '#start/env'
import PaymentOrder from '#models/payment_order'
import { assertPaymentTransition } from '#deposits/payment_state'
import { postLedgerTransaction } from '#ledger/ledger'
import { GATEWAY_ZONE } from '#services/clock'

/**
 * Which paid deposits are due to settle into balance at `now`:
 * - default, T+0: those paid at least SETTLEMENT_DELAY_MINUTES (default 30) ago;
 * - with SETTLEMENT_CUTOFF=HH:mm: those paid before the most recent daily
 *   cut-off (Bangkok time), all at once after it.
 */
export function settlementBoundary(now: DateTime = DateTime.utc()): DateTime {
  const cutoff = env.get('SETTLEMENT_CUTOFF')
  if (cutoff && !/^([01]\d|2[0-3]):[0-5]\d$/.test(cutoff)) {
    throw new Error(`SETTLEMENT_CUTOFF must be HH:mm (Bangkok time), got "${cutoff}"`)
  }
  if (cutoff) {
    const [hour, minute] = cutoff.split(':').map(Number)
    const local = now.setZone(GATEWAY_ZONE)
    let boundary = local.set({ hour, minute, second: 0, millisecond: 0 })
    if (boundary > local) boundary = boundary.minus({ days: 1 })
    return boundary.toUTC()
  }
  return now.minus({ minutes: env.get('SETTLEMENT_DELAY_MINUTES', 30) })
}

/**
 * unsettled_paid → settled_paid for one order: amount − fee moves from
 * unsettle_balance to balance, in one transaction. Idempotent.
 */
export async function settlePayment(paymentOrderId: number) {
  return db.transaction(async (trx) => {
    const order = await PaymentOrder.query({ client: trx })
      .where('id', paymentOrderId)
      .forUpdate()
      .first()
    if (!order || order.status !== 'unsettled_paid') return false
    const net = order.amount - (order.fee ?? 0)
    if (net !== 0) {
      await postLedgerTransaction(trx, {
        kind: 'payment_settled',
        reference: { type: 'payment', id: order.platformOrderId },
        legs: [
          { merchantId: order.merchantId, account: 'unsettled', amount: -net },
          { merchantId: order.merchantId, account: 'available', amount: net },
        ],
      })
    }
    assertPaymentTransition('unsettled_paid', 'settled_paid')
    order.status = 'settled_paid'
    order.settledAt = DateTime.utc()
    await order.useTransaction(trx).save()
    return true
  })
}

/** Settles every paid deposit that is due (the scheduled job and `settle:run`). */
export async function settleDuePayments(options: { ignoreDelay?: boolean; now?: DateTime } = {}) {
  const boundary = options.ignoreDelay
    ? DateTime.utc().plus({ years: 1 })
    : settlementBoundary(options.now)
  let settled = 0
  for (;;) {
    const due = await PaymentOrder.query()
      .where('status', 'unsettled_paid')
      .where('paid_at', '<=', boundary.toJSDate())
      .orderBy('paid_at')
      .limit(500)
      .select('id')
    if (due.length === 0) return settled
    for (const { id } of due) if (await settlePayment(id)) settled++
    if (due.length < 500) return settled
  }
}
