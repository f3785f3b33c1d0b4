import { DateTime } from 'luxon'
import vine from '@vinejs/vine'
import paymentsConfig from '#config/payments'
import PaymentOrder from '#payments/models/payment_order'
import { transitionPayment } from '#payments/payment_state'
import { SYSTEM, type Actor } from '#core/actor'
import { GATEWAY_ZONE } from '#core/clock'
import { recordAudit } from '#core/audit'
import { onOff, validateInput } from '#core/validation'
import { claimOfOrder } from '#reconciliation/receipts'
import { inTransaction } from '#core/transaction'

/**
 * Which paid deposits are due to settle into balance at `now`:
 * - default, T+0: those paid at least SETTLEMENT_DELAY_MINUTES (default 30) ago;
 * - with SETTLEMENT_CUTOFF=HH:mm: those paid before the most recent daily
 *   cut-off (Bangkok time), all at once after it.
 */
export function settlementBoundary(now: DateTime = DateTime.utc()): DateTime {
  const cutoff = paymentsConfig.settlementCutoff
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
  return now.minus({ minutes: paymentsConfig.settlementDelayMinutes })
}

/**
 * unsettled_paid → settled_paid for one order: paid_amount − fee moves from
 * unsettle_balance to balance, in one transaction. Idempotent. A payment
 * credited before its bank line arrived (an open receivable) waits for the
 * line: money becomes withdrawable only once the bank has it.
 */
export async function settlePayment(paymentOrderId: number, actor: Actor = SYSTEM) {
  return inTransaction(
    async (trx) => {
      const order = await PaymentOrder.query({ client: trx })
        .where('id', paymentOrderId)
        .forUpdate()
        .first()
      if (!order || order.status !== 'unsettled_paid') return false
      const claim = await claimOfOrder(trx, order.id)
      if (claim && claim.statementLineId === null) return false
      await transitionPayment(trx, order, { to: 'settled_paid', actor, reason: 'settled' })
      return true
    },
    { idempotent: true }
  )
}

function dueBefore(options: { ignoreDelay?: boolean; now?: DateTime }) {
  return options.ignoreDelay ? DateTime.utc().plus({ years: 1 }) : settlementBoundary(options.now)
}

function duePayments(boundary: DateTime) {
  return PaymentOrder.query()
    .where('status', 'unsettled_paid')
    .where('paid_at', '<=', boundary.toJSDate())
    .whereNotExists((claims) =>
      claims
        .from('receipt_claims')
        .whereColumn('receipt_claims.payment_order_id', 'payment_orders.id')
        .whereNull('receipt_claims.statement_line_id')
    )
}

/**
 * Settles every paid deposit that is due (the scheduled job; `settle:run`
 * through settlePayments), oldest first, each in its own transaction.
 */
export async function settleDuePayments(options: { ignoreDelay?: boolean; now?: DateTime } = {}) {
  return settlePaidBefore(dueBefore(options), SYSTEM)
}

async function settlePaidBefore(boundary: DateTime, actor: Actor) {
  let settled = 0
  for (;;) {
    const due = await duePayments(boundary).orderBy('paid_at').limit(500).select('id')
    if (due.length === 0) return settled
    for (const { id } of due) if (await settlePayment(id, actor)) settled++
    if (due.length < 500) return settled
  }
}

export const settlePaymentsValidator = vine.compile(
  vine.object({
    /** Settle every unsettled_paid order, whatever the delay or cut-off. */
    now: vine.any().use(onOff()).optional(),
  })
)

/**
 * An operator settles the due paid deposits once, as the job does (`now`:
 * all of them). Each order settles in its own short transaction, which locks
 * the order and its merchant's balance and records the operator on the
 * order's timeline; one transaction for a whole run would hold those locks
 * against payouts and the job for as long as the run takes. So the run's
 * audit row, with how many orders were due, commits first, before any order
 * settles: no settlement by the run without it. Nothing due: nothing written.
 * Returns how many orders this run settled (the job may take some).
 */
export async function settlePayments(input: Record<string, unknown>, actor: Actor) {
  const data = await validateInput(settlePaymentsValidator, input)
  const ignoreDelay = data.now ?? false
  const boundary = dueBefore({ ignoreDelay })
  const due = await inTransaction(async (trx) => {
    const count = await duePayments(boundary).useTransaction(trx).count('* as total').first()
    const total = Number(count?.$extras.total ?? 0)
    if (total > 0) {
      await recordAudit(trx, actor, {
        action: 'payments.settle_run',
        details: { now: ignoreDelay, paid_before: boundary.toISO(), due: total },
      })
    }
    return total
  })
  if (due === 0) return { due, settled: 0 }
  return { due, settled: await settlePaidBefore(boundary, actor) }
}
