import vine from '@vinejs/vine'
import { transitionPayment } from '#payments/payment_state'
import {
  decisionComment,
  lockPayment,
  paymentOrderId,
  paymentSnapshot,
  underlyingStatus,
} from '#payments/payment_rules'
import { flagNegativeBalance, postLedgerTransaction } from '#ledger/ledger'
import { receivableReversedPosting } from '#ledger/recipes'
import { recordOrderEvent } from '#core/order_events'
import { changedValues, recordAudit } from '#core/audit'
import { ActionError, validateInput } from '#core/validation'
import { formatThb } from '#core/money'
import type { Actor } from '#core/actor'
import { toClaim } from '#reconciliation/receipts'
import { inTransaction } from '#core/transaction'

/** Why a payment credited on a slip's (or an operator's) word is taken back. */
export const REVERSE_CREDIT_REASON_CODES = [
  'no_money_received',
  'forged_slip',
  'transfer_recalled',
  'other',
] as const

export const reverseReceivableValidator = vine.compile(
  vine.object({
    platform_order_id: vine.any().use(paymentOrderId()),
    reason_code: vine.enum(REVERSE_CREDIT_REASON_CODES),
    comment: decisionComment(),
  })
)

const MESSAGES = {
  'reason_code.required': `reason_code is required: one of ${REVERSE_CREDIT_REASON_CODES.join(', ')}`,
  'comment.required': 'comment is required: say why the bank will not receive this money',
}

/**
 * A payment credited before its bank line (a slip approved, a payment marked
 * paid) whose line never came: an operator takes the credit back. In one
 * transaction: the receivable is closed (reversed, never cleared), the
 * merchant's credit, fee and slot adjustment go back (from unsettle_balance,
 * where such a payment waits since it cannot settle before its line; from
 * balance for one paid before the upgrade that settled), the order is
 * frozen for review (a settled one keeps its final status), with its event
 * and the audit row. No callback: the spec has none for it; the merchant
 * sees the balance and is told by the operator.
 */
export async function reverseReceivable(input: Record<string, unknown>, actor: Actor) {
  const data = await validateInput(reverseReceivableValidator, input, MESSAGES)
  return inTransaction(async (trx) => {
    const order = await lockPayment(trx, data.platform_order_id)
    const id = order.platformOrderId
    const row = await trx
      .from('receipt_claims')
      .where('payment_order_id', order.id)
      .forUpdate()
      .first()
    const claim = row ? toClaim(row) : null
    if (!claim || claim.statementLineId !== null || claim.reversedAt !== null) {
      throw ActionError.field(
        'platform_order_id',
        !claim
          ? `${id} was not credited before its bank line: there is no receivable to reverse`
          : claim.reversedAt
            ? `${id}'s credit was already reversed by ${row.reversed_by_actor}`
            : `${id} is backed by statement line #${claim.statementLineId}: the bank has its money`
      )
    }
    const underlying = underlyingStatus(order)
    if (underlying !== 'unsettled_paid' && underlying !== 'settled_paid') {
      throw ActionError.field('platform_order_id', `${id} is ${order.status}: nothing to take back`)
    }
    const before = paymentSnapshot(order)
    const account = underlying === 'settled_paid' ? 'available' : 'unsettled'
    const credit = { creditedBase: order.paidAmount ?? order.amount, fee: order.fee ?? 0 }
    await postLedgerTransaction(
      trx,
      receivableReversedPosting({ order, expected: claim.expectedAmount, credit, account })
    )
    await trx
      .from('receipt_claims')
      .where('id', claim.id)
      .update({ reversed_at: new Date(), reversed_by_actor: actor.name.slice(0, 120) })
    const said =
      `credit of ${formatThb(credit.creditedBase - credit.fee)} THB reversed ` +
      `(${data.reason_code}): ${data.comment}`
    if (order.status === 'unsettled_paid') {
      await transitionPayment(trx, order, { to: 'freeze', actor, reason: said })
    } else {
      await recordOrderEvent(trx, {
        orderType: 'payment',
        orderId: order.id,
        from: order.status,
        to: order.status,
        actor,
        reason: said,
      })
    }
    if (account === 'available') await flagNegativeBalance(trx, order.merchantId)
    const diff = changedValues(before, paymentSnapshot(order))
    await recordAudit(trx, actor, {
      action: 'payment.reverse_credit',
      target: { type: 'payment', id },
      before: diff.before,
      after: diff.after,
      reason: { code: data.reason_code, comment: data.comment },
      details: {
        claim_id: claim.id,
        expected: claim.expectedAmount,
        reversed: credit.creditedBase - credit.fee,
        fee: credit.fee,
        from: account,
      },
    })
    return { order, reversed: credit.creditedBase - credit.fee, fee: credit.fee }
  })
}
