import { test } from '@japa/runner'
import { receiveLine } from '#tests/helpers/lines'
import { DateTime } from 'luxon'
import PaymentOrder from '#payments/models/payment_order'
import PaymentSlip from '#slips/models/payment_slip'
import { freezePayment } from '#payments/actions/freeze_payment'
import { unfreezePayment } from '#payments/actions/unfreeze_payment'
import { markPaymentPaid } from '#payments/actions/mark_payment_paid'
import { expirePayment, sweepExpiredPayments } from '#payments/actions/expire_payment'
import { settleDuePayments } from '#payments/actions/settle_payment'
import { reviewSlip } from '#slips/actions/review_slip'
import { verifyLedger } from '#ledger/verify'
import { orderTimeline } from '#core/order_events'
import { ActionError } from '#core/validation'
import { AlreadyDone } from '#core/already_done'
import { queue } from '#core/queue/queue_manager'
import { byField, refusal } from '#tests/helpers/actions'
import {
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
} from '#tests/helpers/merchants'
import {
  attachSlip,
  auditRows,
  balanceOf,
  callbackRowsOf,
  createPayment,
  operatorActor,
  postingsOf,
  removeSlipImages,
} from '#tests/helpers/decisions'

const LATER = () => DateTime.utc().plus({ days: 1 })

const FREEZE = { reason_code: 'suspected_fraud', comment: 'customer disputes the transfer' }
const UNFREEZE = { reason_code: 'review_cleared', comment: 'bank confirmed the transfer' }
const PAID = { reason_code: 'seen_on_statement', comment: 'credit seen in the KBank portal' }

test.group('operator decisions: freeze and unfreeze', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await queue('payments').obliterate({ force: true })
  })

  test('a frozen open order does not expire, not even when the sweep runs after expire_datetime; unfreezing restores open and it expires', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ orderTtlSeconds: 1 })
    await createDepositAccount()
    const { actor } = await operatorActor('ops@example.com')
    const order = await createPayment(who)

    const frozen = await freezePayment(
      { platform_order_id: order.platformOrderId, ...FREEZE },
      actor
    )
    assert.equal(frozen.status, 'freeze')
    assert.equal(frozen.statusBeforeFreeze, 'open')

    // The expiry sweep, after expire_datetime, leaves the frozen order alone.
    await order.refresh()
    assert.equal(order.status, 'freeze')
    assert.isFalse(await expirePayment(order.id, LATER()))
    assert.equal(await sweepExpiredPayments(LATER()), 0)
    assert.lengthOf(await callbackRowsOf(order), 0)

    // Twice: the second is refused, nothing more is written.
    const again = await refusal(
      freezePayment({ platform_order_id: order.platformOrderId, ...FREEZE }, actor)
    )
    // A notice, saying who froze it and when ("you": the same operator).
    assert.instanceOf(again, AlreadyDone)
    assert.match(
      byField(again).general,
      new RegExp(
        `^${order.platformOrderId} was frozen by you at \\d{2}:\\d{2} \\(GMT\\+7\\) \\(it was open\\); nothing more to do$`
      )
    )
    const { actor: colleague } = await operatorActor('other@example.com')
    const byColleague = await refusal(
      freezePayment({ platform_order_id: order.platformOrderId, ...FREEZE }, colleague)
    )
    assert.include(byField(byColleague).general, 'was frozen by ops@example.com at ')

    const unfrozen = await unfreezePayment(
      { platform_order_id: order.platformOrderId, ...UNFREEZE },
      actor
    )
    assert.equal(unfrozen.status, 'open')
    assert.isNull(unfrozen.statusBeforeFreeze)
    const twice = await refusal(
      unfreezePayment({ platform_order_id: order.platformOrderId, ...UNFREEZE }, actor)
    )
    assert.instanceOf(twice, AlreadyDone)
    assert.match(
      byField(twice).general,
      /was unfrozen by you at \d{2}:\d{2} \(GMT\+7\) \(it is open\); nothing more to do$/
    )

    // Back to open and overdue: the sweep expires it, with its FAIL callback.
    assert.equal(await sweepExpiredPayments(LATER()), 1)
    await order.refresh()
    assert.equal(order.status, 'error')
    const rows = await callbackRowsOf(order)
    assert.deepEqual(
      rows.map((row) => row.status),
      ['FAIL']
    )

    // Each decision: one audit row, the operator, before/after, reason code and comment.
    const freezes = await auditRows('payment.freeze')
    assert.lengthOf(freezes, 1)
    assert.equal(freezes[0].actor, 'operator:ops@example.com')
    assert.isNotNull(freezes[0].operator_id)
    assert.equal(freezes[0].subject_id, order.platformOrderId)
    assert.deepEqual(freezes[0].before_values, { status: 'open', status_before_freeze: null })
    assert.deepEqual(freezes[0].after_values, { status: 'freeze', status_before_freeze: 'open' })
    assert.equal(freezes[0].reason_code, 'suspected_fraud')
    assert.equal(freezes[0].comment, FREEZE.comment)
    const unfreezes = await auditRows('payment.unfreeze')
    assert.lengthOf(unfreezes, 1)
    assert.deepEqual(unfreezes[0].after_values, { status: 'open', status_before_freeze: null })
    assert.equal(unfreezes[0].reason_code, 'review_cleared')

    // The timeline: who froze it and why.
    const timeline = await orderTimeline('payment', order.id)
    const froze = timeline.find((event) => event.toStatus === 'freeze')
    assert.equal(froze?.actor, 'operator:ops@example.com')
    assert.include(froze?.reason ?? '', 'suspected_fraud')
  })

  test('a frozen paid order does not settle; unfreezing returns it to unsettled_paid and it settles', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ paymentFeeRateBps: 100 })
    await createDepositAccount()
    const { actor } = await operatorActor('ops@example.com')
    const order = await createPayment(who, '200.00')
    // Paid by its bank line (a payment marked paid waits for its line to settle).
    await receiveLine(order.depositAccountId, { amount: order.transferAmount })
    await freezePayment({ platform_order_id: order.platformOrderId, ...FREEZE }, actor)

    assert.equal(await settleDuePayments({ ignoreDelay: true }), 0)
    await order.refresh()
    assert.equal(order.status, 'freeze')
    assert.equal(order.statusBeforeFreeze, 'unsettled_paid')
    assert.deepEqual(await balanceOf(who), { balance: 0, freeze_balance: 0, unsettle_balance: 198 })

    // Frozen after it was paid: it can only go back, not be marked paid again.
    const mark = await refusal(
      markPaymentPaid({ platform_order_id: order.platformOrderId, ...PAID }, actor)
    )
    assert.include(byField(mark).platform_order_id, 'unfreeze it instead')

    await unfreezePayment({ platform_order_id: order.platformOrderId, ...UNFREEZE }, actor)
    assert.equal((await order.refresh()).status, 'unsettled_paid')
    assert.equal(await settleDuePayments({ ignoreDelay: true }), 1)
    assert.equal((await order.refresh()).status, 'settled_paid')
    assert.deepEqual(await balanceOf(who), { balance: 198, freeze_balance: 0, unsettle_balance: 0 })
    assert.lengthOf(await postingsOf(order), 1)
    assert.deepEqual((await verifyLedger()).drifts, [])
  })

  test('final orders cannot be frozen; input problems name their fields', async ({ assert }) => {
    const who = await createDepositMerchant()
    await createDepositAccount()
    const { actor } = await operatorActor('ops@example.com')
    const order = await createPayment(who)
    await expirePayment(order.id, LATER())

    const final = await refusal(
      freezePayment({ platform_order_id: order.platformOrderId, ...FREEZE }, actor)
    )
    assert.include(byField(final).platform_order_id, 'is error, a final status')

    const invalid = await refusal(
      freezePayment({ platform_order_id: 'nope', reason_code: 'because', comment: '' }, actor)
    )
    assert.deepEqual(Object.keys(byField(invalid)).sort(), [
      'comment',
      'platform_order_id',
      'reason_code',
    ])
    assert.include(byField(invalid).platform_order_id, 'marker P')
    assert.include(byField(invalid).comment, 'comment is required')

    // Another last character than the order's own (a random id may end in Z).
    const other = order.platformOrderId.endsWith('Z') ? 'Y' : 'Z'
    const missing = await refusal(
      freezePayment(
        { platform_order_id: order.platformOrderId.replace(/.$/, other), ...FREEZE },
        actor
      )
    )
    assert.isTrue(missing.notFound)
  })
})

test.group('operator decisions: marking a payment paid', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
  })

  test('two submits at once: one posting, one PAID callback row, one clean refusal; the ledger balances', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ paymentFeeRateBps: 150 })
    await createDepositAccount()
    const { actor } = await operatorActor('ops@example.com')
    const order = await createPayment(who, '1000.00')

    const outcomes = await Promise.allSettled([
      markPaymentPaid({ platform_order_id: order.platformOrderId, ...PAID }, actor),
      markPaymentPaid({ platform_order_id: order.platformOrderId, ...PAID }, actor),
    ])
    const done = outcomes.filter((outcome) => outcome.status === 'fulfilled')
    const refused = outcomes.filter((outcome) => outcome.status === 'rejected')
    assert.lengthOf(done, 1)
    assert.lengthOf(refused, 1)
    const error = (refused[0] as PromiseRejectedResult).reason
    assert.instanceOf(error, ActionError)
    // The second submit is told the first one did it, as a notice.
    assert.instanceOf(error, AlreadyDone)
    assert.match(
      byField(error).general,
      new RegExp(
        `^${order.platformOrderId} was marked paid by you at \\d{2}:\\d{2} \\(GMT\\+7\\) \\(it is unsettled_paid\\); nothing more to do$`
      )
    )
    assert.equal((done[0] as PromiseFulfilledResult<any>).value.outcome, 'paid')

    await order.refresh()
    assert.equal(order.status, 'unsettled_paid')
    assert.equal(order.fee, 15_00)
    assert.isNull(order.slotAmount)
    assert.isNotNull(order.paidAt)
    assert.isFalse(order.awaitingReview)
    assert.lengthOf(await postingsOf(order), 1)
    const rows = await callbackRowsOf(order)
    assert.lengthOf(rows, 1)
    assert.equal(JSON.parse(rows[0].body).status, 'PAID')
    assert.include(rows[0].body, '"amount":1000.00')
    assert.deepEqual(await balanceOf(who), { balance: 0, freeze_balance: 0, unsettle_balance: 985 })
    assert.deepEqual((await verifyLedger()).drifts, [])

    const audits = await auditRows('payment.mark_paid')
    assert.lengthOf(audits, 1)
    assert.equal(audits[0].actor, 'operator:ops@example.com')
    assert.equal(audits[0].reason_code, 'seen_on_statement')
    assert.equal(audits[0].comment, PAID.comment)
    assert.include(audits[0].before_values, { status: 'open' })
    assert.include(audits[0].after_values, { status: 'unsettled_paid' })
    const timeline = await orderTimeline('payment', order.id)
    assert.equal(timeline.at(-1)?.actor, 'operator:ops@example.com')
    assert.include(timeline.at(-1)?.reason ?? '', 'marked paid (seen_on_statement)')
  })

  test('error is final; a frozen open order may be marked paid; the reason code must be known', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount()
    const { actor } = await operatorActor('ops@example.com')
    const expired = await createPayment(who)
    await expirePayment(expired.id, LATER())
    const late = await refusal(
      markPaymentPaid({ platform_order_id: expired.platformOrderId, ...PAID }, actor)
    )
    assert.include(byField(late).platform_order_id, 'a late payment is credited')
    assert.lengthOf(await postingsOf(expired), 0)

    const held = await createPayment(who)
    await freezePayment({ platform_order_id: held.platformOrderId, ...FREEZE }, actor)
    const result = await markPaymentPaid(
      { platform_order_id: held.platformOrderId, ...PAID },
      actor
    )
    assert.equal(result.order.status, 'unsettled_paid')
    assert.isNull(result.order.statusBeforeFreeze)
    assert.lengthOf(await postingsOf(held), 1)

    const unknown = await refusal(
      markPaymentPaid(
        { platform_order_id: held.platformOrderId, reason_code: 'gut_feeling', comment: 'x' },
        actor
      )
    )
    assert.include(byField(unknown).reason_code, 'reason_code must be one of')
    assert.deepEqual((await verifyLedger()).drifts, [])
  })
})

test.group('operator decisions: flagged slips', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
  })
  group.teardown(() => removeSlipImages())

  test('approving a slip marks the payment paid and the slip approved by the operator; twice is refused', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount()
    const { operator, actor } = await operatorActor('reviewer@example.com')
    const order = await createPayment(who)
    const slip = await attachSlip(order)
    assert.isTrue((await order.refresh()).awaitingReview)

    const review = {
      slip_id: slip.id,
      decision: 'approve',
      reason_code: 'slip_verified',
      comment: 'slip matches',
    }
    const result = await reviewSlip(review, actor)
    assert.equal(result.decision, 'approve')
    assert.equal(result.order.status, 'unsettled_paid')

    await order.refresh()
    await slip.refresh()
    assert.equal(order.status, 'unsettled_paid')
    assert.isFalse(order.awaitingReview)
    assert.equal(slip.reviewDecision, 'approved')
    assert.equal(slip.reviewedBy, operator.id)
    assert.isNotNull(slip.reviewedAt)
    assert.equal(slip.reviewReasonCode, 'slip_verified')
    assert.equal(slip.reviewComment, 'slip matches')
    assert.lengthOf(await postingsOf(order), 1)
    assert.deepEqual(
      (await callbackRowsOf(order)).map((row) => row.status),
      ['PAID']
    )

    const again = await refusal(reviewSlip(review, actor))
    assert.instanceOf(again, AlreadyDone)
    assert.match(
      byField(again).general,
      new RegExp(
        `^slip ${slip.id} was approved by you at \\d{2}:\\d{2} \\(GMT\\+7\\); nothing more to do$`
      )
    )
    const slipAudits = await auditRows('slip.review')
    assert.lengthOf(slipAudits, 1)
    assert.deepEqual(slipAudits[0].after_values.review_decision, 'approved')
    assert.deepEqual((await verifyLedger()).drifts, [])
  })

  test('rejecting the slip returns the order to plain open, and it expires again', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount()
    const { operator, actor } = await operatorActor('reviewer@example.com')
    const order = await createPayment(who)
    const slip = await attachSlip(order)
    // Under review, an overdue order does not expire.
    assert.isFalse(await expirePayment(order.id, LATER()))

    const result = await reviewSlip(
      {
        slip_id: slip.id,
        decision: 'reject',
        reason_code: 'no_matching_credit',
        comment: 'no credit on the statement',
      },
      actor
    )
    assert.equal(result.decision, 'reject')
    await order.refresh()
    await slip.refresh()
    assert.equal(order.status, 'open')
    assert.isFalse(order.awaitingReview)
    assert.equal(slip.reviewDecision, 'rejected')
    assert.equal(slip.reviewedBy, operator.id)
    assert.lengthOf(await callbackRowsOf(order), 0)

    assert.isTrue(await expirePayment(order.id, LATER()))
    assert.equal((await order.refresh()).status, 'error')

    // An approve code is not a reject code, and the reverse.
    const other = await createPayment(who)
    const otherSlip = await attachSlip(other)
    const wrong = await refusal(
      reviewSlip(
        { slip_id: otherSlip.id, decision: 'reject', reason_code: 'slip_verified', comment: 'x' },
        actor
      )
    )
    assert.include(byField(wrong).reason_code, 'reason_code for reject must be one of')
  })

  test('rejecting the slip of an order already past its expiry fails it with a FAIL callback', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount()
    const { actor } = await operatorActor('reviewer@example.com')
    const order = await createPayment(who)
    const slip = await attachSlip(order)
    // The review took longer than the order's life.
    await PaymentOrder.query()
      .where('id', order.id)
      .update({ expire_at: DateTime.utc().minus({ minutes: 5 }).toJSDate() })
    assert.isFalse(await expirePayment(order.id))

    await reviewSlip(
      {
        slip_id: slip.id,
        decision: 'reject',
        reason_code: 'forged_or_edited',
        comment: 'edited amount',
      },
      actor
    )
    await order.refresh()
    assert.equal(order.status, 'error')
    assert.equal(order.errorReason, 'rejected')
    assert.isNull(order.slotAmount)
    assert.isFalse(order.awaitingReview)
    const rows = await callbackRowsOf(order)
    assert.deepEqual(
      rows.map((row) => row.status),
      ['FAIL']
    )
    assert.lengthOf(await postingsOf(order), 0)
  })

  test('rejecting one slip keeps the order under review while another slip waits', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ slipUploadWaitSeconds: 0 })
    await createDepositAccount()
    const { actor } = await operatorActor('reviewer@example.com')
    const order = await createPayment(who)
    const first = await attachSlip(order, 'payment_page')
    const second = await attachSlip(order, 'merchant_api')

    await reviewSlip(
      { slip_id: first.id, decision: 'reject', reason_code: 'unreadable', comment: 'blurred' },
      actor
    )
    await order.refresh()
    assert.equal(order.status, 'open')
    assert.isTrue(order.awaitingReview)
    assert.isFalse(await expirePayment(order.id, LATER()))
    const pending = await PaymentSlip.query()
      .where('payment_order_id', order.id)
      .whereNull('review_decision')
    assert.deepEqual(
      pending.map((slip) => slip.id),
      [second.id]
    )
  })
})
