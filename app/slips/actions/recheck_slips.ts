import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import logger from '@adonisjs/core/services/logger'
import PaymentOrder from '#payments/models/payment_order'
import DepositAccount from '#payments/models/deposit_account'
import PaymentSlip from '#slips/models/payment_slip'
import { parseSlipText } from '#slips/mini_qr'
import { checkSlip } from '#slips/slip_check'
import { recordOrderEvent } from '#core/order_events'
import { dispatch } from '#core/queue/queue_manager'
import { SYSTEM } from '#core/actor'
import slipsConfig from '#config/slips'
import { inTransaction } from '#core/transaction'

export interface RecheckSummary {
  checked: number
  /** Slips that are no longer pending. */
  verified: number
}

const BATCH = 200

/**
 * Verifies pending slips again: of one deposit account's orders (after a
 * statement import added lines to it) or of every account (the periodic
 * sweep), uploaded at most SLIP_RECHECK_MAX_AGE_DAYS ago. Idempotent: a slip
 * that is no longer pending is left alone.
 */
export async function recheckSlips(
  options: { depositAccountId?: number; now?: DateTime } = {}
): Promise<RecheckSummary> {
  const now = options.now ?? DateTime.utc()
  const query = db
    .from('payment_slips')
    .where('payment_slips.verification_status', 'pending')
    .where(
      'payment_slips.created_at',
      '>=',
      now.minus({ days: slipsConfig.recheckMaxAgeDays }).toJSDate()
    )
    .orderBy('payment_slips.id')
    .limit(BATCH)
    .select('payment_slips.id')
  if (options.depositAccountId !== undefined) {
    query
      .join('payment_orders', 'payment_orders.id', 'payment_slips.payment_order_id')
      .where('payment_orders.deposit_account_id', options.depositAccountId)
  }
  const summary: RecheckSummary = { checked: 0, verified: 0 }
  for (const { id } of await query) {
    summary.checked++
    if (await recheckSlip(Number(id))) summary.verified++
  }
  return summary
}

/**
 * One pending slip: its QR text read again, the sources asked again, the
 * rules applied with what is known now. When it is no longer pending the new
 * verdict is stored (the slip row locked, so two workers store it once)
 * with an event on the order's timeline. Returns whether it was verified.
 */
export async function recheckSlip(slipId: number): Promise<boolean> {
  const slip = await PaymentSlip.find(slipId)
  if (!slip || slip.verificationStatus !== 'pending' || !slip.qrText) return false
  const parsed = parseSlipText(slip.qrText)
  if (parsed.kind !== 'slip') return false
  const order = await PaymentOrder.findOrFail(slip.paymentOrderId)
  const account = await DepositAccount.findOrFail(order.depositAccountId)
  const check = await checkSlip({
    reading: {
      kind: 'slip',
      qrText: slip.qrText,
      sendingBank: parsed.sendingBank,
      transRef: parsed.transRef,
      transDate: parsed.transDate,
    },
    sha256: slip.sha256,
    target: { order, account },
    slipId: slip.id,
  })
  const { verification } = check
  if (verification.status === 'pending') {
    await PaymentSlip.query().where('id', slip.id).update({ checked_at: new Date() })
    return false
  }
  return inTransaction(async (trx) => {
    const locked = await PaymentSlip.query({ client: trx }).where('id', slip.id).forUpdate().first()
    if (!locked || locked.verificationStatus !== 'pending') return false
    locked.merge({
      verificationStatus: verification.status,
      verificationMsg: verification.message,
      verification: check.record,
      checkedAt: DateTime.utc(),
    })
    await locked.useTransaction(trx).save()
    await recordOrderEvent(trx, {
      orderType: 'payment',
      orderId: order.id,
      from: order.status,
      to: order.status,
      actor: SYSTEM,
      reason: `slip ${slip.id} verified: ${verification.message}`,
    })
    return true
  })
}

/**
 * After new statement lines of a deposit account are stored and matched:
 * its pending slips are checked again by the worker. Best effort: when the
 * job cannot be added, the periodic sweep checks them.
 */
export async function scheduleSlipRecheck(depositAccountId: number) {
  try {
    await dispatch('recheckSlips', { depositAccountId })
  } catch (error) {
    logger.warn(
      { err: error, deposit_account_id: depositAccountId },
      'slip re-check not scheduled; the sweep will check the slips'
    )
  }
}
