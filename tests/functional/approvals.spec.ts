import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import Platform from '#merchants/models/platform'
import ApprovalRequest from '#approvals/models/approval_request'
import { configurePlatform } from '#merchants/actions/configure_platform'
import { markPaymentPaid } from '#payments/actions/mark_payment_paid'
import { expirePayment } from '#payments/actions/expire_payment'
import { reviewSlip } from '#slips/actions/review_slip'
import { requestApproval } from '#approvals/actions/request_approval'
import { approveRequest } from '#approvals/actions/approve_request'
import { rejectRequest } from '#approvals/actions/reject_request'
import { expireDueApprovalRequests } from '#approvals/approval_requests'
import { verifyLedger } from '#ledger/verify'
import { cliActor, type Actor } from '#core/actor'
import { AlreadyDone } from '#core/already_done'
import { byField, refusal } from '#tests/helpers/actions'
import {
  authBody,
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
  signedPost,
  type TestMerchant,
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
const PAID = { reason_code: 'seen_on_statement', comment: 'credit seen in the KBank portal' }
const REJECT = { reason_code: 'insufficient_evidence', comment: 'no credit found' }

/** A deposit merchant on platform "test", whose four-eyes threshold is 50.00 THB (set from the command line). */
async function thresholdMerchant(threshold = '50.00') {
  const who = await createDepositMerchant({ paymentFeeRateBps: 100 })
  await createDepositAccount()
  await configurePlatform({ code: 'test', four_eyes_threshold: threshold }, cliActor())
  return who
}

async function operators() {
  return {
    alice: await operatorActor('alice@example.com', 'operator'),
    bob: await operatorActor('bob@example.com', 'operator'),
    carol: await operatorActor('carol@example.com', 'operator'),
    dave: await operatorActor('dave@example.com', 'admin'),
    viewer: await operatorActor('viewer@example.com', 'viewer'),
  }
}

function approve(id: number, actor: Actor, comment?: string) {
  return approveRequest({ approval_request_id: id, comment }, actor)
}

test.group('four eyes: marking a payment paid above the threshold', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
  })
  group.teardown(() => removeSlipImages())

  test('slip approval above the threshold opens a request; neither the requester nor a viewer can approve; two approvers at once pay it once', async ({
    assert,
  }) => {
    const who = await thresholdMerchant()
    const { alice, bob, dave, viewer } = await operators()
    const order = await createPayment(who, '100.00')
    const slip = await attachSlip(order)

    const result = await reviewSlip(
      {
        slip_id: slip.id,
        decision: 'approve',
        reason_code: 'slip_verified',
        comment: 'looks right',
      },
      alice.actor
    )
    if (result.decision !== 'approve') throw new Error('expected an approval')
    assert.equal(result.outcome, 'approval_requested')
    const request = result.request!
    assert.equal(request.status, 'pending')
    assert.equal(request.kind, 'mark_paid')
    assert.equal(request.action, 'payment.mark_paid')
    assert.equal(request.targetType, 'payment')
    assert.equal(request.targetId, order.platformOrderId)
    assert.equal(request.amount, 10_000)
    assert.equal(request.requestedBy, alice.operator.id)
    assert.equal(request.reviewedBy, alice.operator.id)
    assert.deepEqual(request.input, {
      platform_order_id: order.platformOrderId,
      slip_id: slip.id,
      reason_code: 'slip_verified',
      comment: 'looks right',
    })
    assert.isTrue(request.expiresAt > DateTime.utc().plus({ hours: 23 }))

    // Nothing moved: still open and under review, no posting, no callback.
    await order.refresh()
    await slip.refresh()
    assert.equal(order.status, 'open')
    assert.isTrue(order.awaitingReview)
    assert.isNull(slip.reviewDecision)
    assert.lengthOf(await postingsOf(order), 0)
    assert.lengthOf(await callbackRowsOf(order), 0)
    assert.isFalse(await expirePayment(order.id, LATER()), 'waits for the decision')

    const own = await refusal(approve(request.id, alice.actor))
    assert.include(byField(own).general, 'you asked for approval request')
    const readOnly = await refusal(approve(request.id, viewer.actor))
    assert.include(byField(readOnly).general, 'needs the operator role')
    const fromShell = await refusal(approve(request.id, cliActor()))
    assert.include(byField(fromShell).general, 'only a signed-in operator')
    // The slip cannot be decided again while its request waits.
    const meanwhile = await refusal(
      reviewSlip(
        { slip_id: slip.id, decision: 'reject', reason_code: 'unreadable', comment: 'x' },
        bob.actor
      )
    )
    assert.include(byField(meanwhile).slip_id, `approval request #${request.id}`)

    // Two approvers submit at once: one runs it, the other is refused.
    const outcomes = await Promise.allSettled([
      approve(request.id, bob.actor, 'checked the statement'),
      approve(request.id, dave.actor),
    ])
    const done = outcomes.filter((outcome) => outcome.status === 'fulfilled')
    const refused = outcomes.filter((outcome) => outcome.status === 'rejected')
    assert.lengthOf(done, 1)
    assert.lengthOf(refused, 1)
    const error = (refused[0] as PromiseRejectedResult).reason
    // The same decision already taken: a notice naming who and when, not an error.
    assert.instanceOf(error, AlreadyDone)
    assert.match(
      byField(error).general,
      /was already approved by \S+@example\.com at \d\d:\d\d \(GMT\+7\); nothing more to do/
    )

    await request.refresh()
    await order.refresh()
    await slip.refresh()
    assert.equal(request.status, 'approved')
    assert.isNull(request.pendingKey)
    assert.include([bob.operator.id, dave.operator.id], request.decidedBy!)
    assert.include(request.result!, { status: 'unsettled_paid', slip_id: slip.id })
    assert.equal(order.status, 'unsettled_paid')
    assert.isFalse(order.awaitingReview)
    assert.equal(slip.reviewDecision, 'approved')
    assert.equal(slip.reviewedBy, alice.operator.id, 'the reviewer of record is who reviewed it')
    assert.lengthOf(await postingsOf(order), 1)
    assert.deepEqual(
      (await callbackRowsOf(order)).map((row) => row.status),
      ['PAID']
    )
    assert.deepEqual(await balanceOf(who), { balance: 0, freeze_balance: 0, unsettle_balance: 99 })
    assert.deepEqual((await verifyLedger()).drifts, [])

    // Audited: the request by alice, the approval and the payment by the approver.
    const requested = await auditRows('approval.request')
    assert.lengthOf(requested, 1)
    assert.equal(requested[0].actor, 'operator:alice@example.com')
    assert.equal(requested[0].reason_code, 'slip_verified')
    const approved = await auditRows('approval.approve')
    assert.lengthOf(approved, 1)
    const marked = await auditRows('payment.mark_paid')
    assert.lengthOf(marked, 1)
    assert.equal(marked[0].actor, approved[0].actor)
    assert.equal(marked[0].details.approval_request_id, request.id)
    assert.equal(marked[0].details.requested_by, 'operator:alice@example.com')
  })

  test('the operator who reviewed the slip cannot approve another operator’s request', async ({
    assert,
  }) => {
    const who = await thresholdMerchant()
    const { alice, bob, carol } = await operators()
    const order = await createPayment(who, '100.00')
    const slip = await attachSlip(order)
    // Alice rejects the slip; later Bob finds the credit and marks the order paid.
    await reviewSlip(
      {
        slip_id: slip.id,
        decision: 'reject',
        reason_code: 'no_matching_credit',
        comment: 'not yet',
      },
      alice.actor
    )
    const asked = await markPaymentPaid(
      { platform_order_id: order.platformOrderId, ...PAID },
      bob.actor
    )
    assert.equal(asked.outcome, 'approval_requested')
    const request = asked.request!
    assert.equal(request.requestedBy, bob.operator.id)
    assert.equal(request.reviewedBy, alice.operator.id)

    const reviewer = await refusal(approve(request.id, alice.actor))
    assert.include(byField(reviewer).general, 'you reviewed the slip')
    const requester = await refusal(approve(request.id, bob.actor))
    assert.include(byField(requester).general, 'you asked for approval request')

    await approve(request.id, carol.actor)
    assert.equal((await order.refresh()).status, 'unsettled_paid')
    assert.lengthOf(await postingsOf(order), 1)
    assert.deepEqual((await verifyLedger()).drifts, [])
  })

  test('at or below the threshold the operator acts alone; no threshold means never', async ({
    assert,
  }) => {
    const who = await thresholdMerchant('100.00')
    const { alice } = await operators()
    const atThreshold = await createPayment(who, '100.00')
    const paid = await markPaymentPaid(
      { platform_order_id: atThreshold.platformOrderId, ...PAID },
      alice.actor
    )
    assert.equal(paid.outcome, 'paid')

    await configurePlatform({ code: 'test', four_eyes_threshold: 'none' }, cliActor())
    const large = await createPayment(who, '900.00')
    const alone = await markPaymentPaid(
      { platform_order_id: large.platformOrderId, ...PAID },
      alice.actor
    )
    assert.equal(alone.outcome, 'paid')
    assert.lengthOf(await ApprovalRequest.all(), 0)
  })
})

test.group('four eyes: rejected, expired and duplicate requests', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
  })
  group.teardown(() => removeSlipImages())

  test('a rejected request runs nothing and the order is plain open again (it expires); decided requests cannot be decided again', async ({
    assert,
  }) => {
    const who = await thresholdMerchant()
    const { alice, bob, carol } = await operators()
    const order = await createPayment(who, '100.00')
    const { request } = await markPaymentPaid(
      { platform_order_id: order.platformOrderId, ...PAID },
      alice.actor
    )
    assert.isTrue((await order.refresh()).awaitingReview, 'held while the request waits')
    assert.isFalse(await expirePayment(order.id, LATER()))

    const missingReason = await refusal(
      rejectRequest({ approval_request_id: request!.id }, bob.actor)
    )
    assert.deepEqual(Object.keys(byField(missingReason)).sort(), ['comment', 'reason_code'])

    await rejectRequest({ approval_request_id: request!.id, ...REJECT }, bob.actor)
    await request!.refresh()
    assert.equal(request!.status, 'rejected')
    assert.equal(request!.decidedBy, bob.operator.id)
    assert.equal(request!.decisionReasonCode, 'insufficient_evidence')
    assert.isNull(request!.pendingKey)
    assert.isFalse((await order.refresh()).awaitingReview)
    assert.lengthOf(await postingsOf(order), 0)

    const late = await refusal(approve(request!.id, carol.actor))
    assert.include(byField(late).approval_request_id, 'was already rejected by bob@example.com at ')
    const twice = await refusal(
      rejectRequest({ approval_request_id: request!.id, ...REJECT }, carol.actor)
    )
    // Carol wanted it rejected, and it is: a notice naming who did it.
    assert.instanceOf(twice, AlreadyDone)
    assert.include(byField(twice).general, 'was already rejected by bob@example.com at ')
    const rejections = await auditRows('approval.reject')
    assert.lengthOf(rejections, 1)
    assert.equal(rejections[0].reason_code, 'insufficient_evidence')

    assert.isTrue(await expirePayment(order.id, LATER()))
    assert.deepEqual(
      (await callbackRowsOf(order)).map((row) => row.status),
      ['FAIL']
    )
  })

  test('an expired request can no longer be approved; the sweep expires the others and releases their orders', async ({
    assert,
  }) => {
    const who = await thresholdMerchant()
    const { alice, bob } = await operators()
    const first = await createPayment(who, '100.00')
    const second = await createPayment(who, '100.00')
    const one = (
      await markPaymentPaid({ platform_order_id: first.platformOrderId, ...PAID }, alice.actor)
    ).request!
    const two = (
      await markPaymentPaid({ platform_order_id: second.platformOrderId, ...PAID }, alice.actor)
    ).request!
    // A day passes without a decision.
    await ApprovalRequest.query()
      .whereIn('id', [one.id, two.id])
      .update({ expires_at: DateTime.utc().minus({ minutes: 1 }).toJSDate() })

    const tooLate = await refusal(approve(one.id, bob.actor))
    assert.include(byField(tooLate).approval_request_id, 'expired at')
    await one.refresh()
    assert.equal(one.status, 'expired', 'recorded although the approval was refused')
    assert.equal(one.decidedByActor, 'system')
    assert.lengthOf(await postingsOf(first), 0)
    assert.isFalse((await first.refresh()).awaitingReview)

    assert.equal(await expireDueApprovalRequests(), 1)
    assert.equal(await expireDueApprovalRequests(), 0)
    assert.equal((await two.refresh()).status, 'expired')
    assert.isFalse((await second.refresh()).awaitingReview)
    assert.lengthOf(await auditRows('approval.expire'), 2)

    // Expired, the order is free for a new request.
    const again = await markPaymentPaid(
      { platform_order_id: second.platformOrderId, ...PAID },
      alice.actor
    )
    assert.equal(again.outcome, 'approval_requested')
    assert.notEqual(again.request!.id, two.id)
    assert.isTrue((await second.refresh()).awaitingReview)

    // Expired but not yet swept: asking again closes it and holds the order for the new one.
    await ApprovalRequest.query()
      .where('id', again.request!.id)
      .update({ expires_at: DateTime.utc().minus({ minutes: 1 }).toJSDate() })
    const third = await markPaymentPaid(
      { platform_order_id: second.platformOrderId, ...PAID },
      bob.actor
    )
    assert.equal(third.outcome, 'approval_requested')
    assert.equal((await again.request!.refresh()).status, 'expired')
    assert.isTrue((await second.refresh()).awaitingReview)
    assert.isFalse(await expirePayment(second.id, LATER()))
  })

  test('a second pending request for the same target and kind is refused, also when two arrive at once', async ({
    assert,
  }) => {
    const who = await thresholdMerchant()
    const { alice, bob, carol } = await operators()
    const order = await createPayment(who, '100.00')
    const { request } = await markPaymentPaid(
      { platform_order_id: order.platformOrderId, ...PAID },
      alice.actor
    )
    const again = await refusal(
      markPaymentPaid({ platform_order_id: order.platformOrderId, ...PAID }, bob.actor)
    )
    assert.include(byField(again).platform_order_id, `approval request #${request!.id}`)
    assert.include(byField(again).platform_order_id, 'already pending')
    assert.include(byField(again).platform_order_id, 'asked by alice@example.com at ')
    // Alice submitting hers again (a double click) is told it waits: a notice.
    const mine = await refusal(
      markPaymentPaid({ platform_order_id: order.platformOrderId, ...PAID }, alice.actor)
    )
    assert.instanceOf(mine, AlreadyDone)
    assert.match(
      byField(mine).general,
      new RegExp(
        `approval request #${request!.id} .* was already asked by you at \\d\\d:\\d\\d \\(GMT\\+7\\); it waits for a second operator`
      )
    )
    const explicit = await refusal(
      requestApproval(
        { action: 'payment.mark_paid', platform_order_id: order.platformOrderId, ...PAID },
        bob.actor
      )
    )
    assert.include(byField(explicit).general, 'already pending')

    const other = await createPayment(who, '20.00') // under the threshold: asked explicitly
    const outcomes = await Promise.allSettled([
      requestApproval(
        { action: 'payment.mark_paid', platform_order_id: other.platformOrderId, ...PAID },
        bob.actor
      ),
      requestApproval(
        { action: 'payment.mark_paid', platform_order_id: other.platformOrderId, ...PAID },
        carol.actor
      ),
    ])
    assert.deepEqual(outcomes.map((outcome) => outcome.status).sort(), ['fulfilled', 'rejected'])
    const pending = await ApprovalRequest.query().where('status', 'pending')
    assert.lengthOf(pending, 2)

    const unknown = await refusal(requestApproval({ action: 'merchant.delete' }, bob.actor))
    assert.include(byField(unknown).action, 'action must be one of')
  })
})

test.group('four eyes: platform switches', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
  })

  async function paymentCreate(who: TestMerchant, id: string) {
    return signedPost(
      '/payment/create',
      who,
      authBody(who, {
        merchant_order_id: id,
        amount: '100.00',
        bank: 'KTB',
        account_name: 'Customer',
        account_no: '1234567890',
      })
    )
  }

  test('switching deposits back on after the killswitch needs a second admin; off is immediate', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount()
    const { bob, carol, dave } = await operators()
    const erin = await operatorActor('erin@example.com', 'admin')

    const off = await configurePlatform(
      { code: 'test', deposit_enabled: 'off', comment: 'bank incident' },
      dave.actor
    )
    assert.deepEqual(off.changed, ['deposit_enabled'])
    assert.lengthOf(off.requests, 0)
    assert.equal((await paymentCreate(who, 'K1')).status, 503)

    const on = await configurePlatform(
      { code: 'test', deposit_enabled: 'on', name: 'Renamed', comment: 'incident over' },
      dave.actor
    )
    assert.deepEqual(on.changed, ['name'], 'the rest of the change is saved')
    assert.lengthOf(on.requests, 1)
    const request = on.requests[0]
    assert.equal(request.kind, 'enable_deposits')
    assert.equal(request.targetId, 'test')
    assert.isFalse((await Platform.findByOrFail('code', 'test')).depositEnabled)
    assert.equal((await paymentCreate(who, 'K2')).status, 503)

    const twice = await refusal(
      configurePlatform({ code: 'test', deposit_enabled: 'on' }, erin.actor)
    )
    assert.include(byField(twice).general, 'already pending')

    const own = await refusal(approve(request.id, dave.actor))
    assert.include(byField(own).general, 'you asked')
    const notAdmin = await refusal(approve(request.id, bob.actor))
    assert.include(byField(notAdmin).general, 'needs the admin role')
    const byOperator = await refusal(
      rejectRequest({ approval_request_id: request.id, ...REJECT }, carol.actor)
    )
    assert.include(byField(byOperator).general, 'needs the admin role')

    await approve(request.id, erin.actor, 'confirmed with the bank')
    assert.isTrue((await Platform.findByOrFail('code', 'test')).depositEnabled)
    assert.equal((await paymentCreate(who, 'K3')).status, 200)
    const configured = await auditRows('platform.configure')
    const last = configured.at(-1)!
    assert.equal(last.actor, 'operator:erin@example.com')
    assert.deepEqual(last.before_values, { deposit_enabled: false })
    assert.deepEqual(last.after_values, { deposit_enabled: true })
    assert.equal(last.details.approval_request_id, request.id)
  })

  test('from the command line deposits go back on at once, and the audit row says so', async ({
    assert,
  }) => {
    await createDepositMerchant()
    await configurePlatform({ code: 'test', deposit_enabled: 'off' }, cliActor())
    const on = await configurePlatform({ code: 'test', deposit_enabled: 'on' }, cliActor())
    assert.deepEqual(on.changed, ['deposit_enabled'])
    assert.lengthOf(on.requests, 0)
    assert.isTrue((await Platform.findByOrFail('code', 'test')).depositEnabled)
    const last = (await auditRows('platform.configure')).at(-1)!
    assert.match(last.actor, /^cli:/)
    assert.deepEqual(last.details, { four_eyes: 'not required from the command line' })
    // A break-glass use every admin is told of.
    const glass = (await auditRows('break_glass.use')).at(-1)!
    assert.equal(glass.details.action, 'platform.enable_deposits')
    assert.lengthOf(await db.from('notifications').where('kind', 'break_glass'), 1)
  })

  test('raising or removing the threshold in the back-office needs approval; lowering it does not', async ({
    assert,
  }) => {
    await createDepositMerchant()
    const { dave } = await operators()
    const erin = await operatorActor('erin@example.com', 'admin')

    const first = await configurePlatform({ code: 'test', four_eyes_threshold: '1000' }, dave.actor)
    assert.deepEqual(first.changed, ['four_eyes_threshold'])
    const lower = await configurePlatform({ code: 'test', four_eyes_threshold: '500' }, dave.actor)
    assert.deepEqual(lower.changed, ['four_eyes_threshold'])
    assert.equal((await Platform.findByOrFail('code', 'test')).fourEyesThreshold, 500_00)

    const removed = await configurePlatform(
      { code: 'test', four_eyes_threshold: 'none' },
      dave.actor
    )
    assert.deepEqual(removed.changed, [])
    assert.lengthOf(removed.requests, 1)
    assert.equal(removed.requests[0].kind, 'four_eyes_threshold')
    assert.equal((await Platform.findByOrFail('code', 'test')).fourEyesThreshold, 500_00)
    await approve(removed.requests[0].id, erin.actor)
    assert.isNull((await Platform.findByOrFail('code', 'test')).fourEyesThreshold)
    const rows = await db.from('approval_requests').where('status', 'approved')
    assert.lengthOf(rows, 1)
  })
})
