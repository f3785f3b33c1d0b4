import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import ApprovalRequest from '#approvals/models/approval_request'
import { configurePlatform } from '#merchants/actions/configure_platform'
import { markPaymentPaid } from '#payments/actions/mark_payment_paid'
import { freezePayment } from '#payments/actions/freeze_payment'
import { unfreezePayment } from '#payments/actions/unfreeze_payment'
import { expirePayment } from '#payments/actions/expire_payment'
import { FrozenOrderRefusal } from '#payments/frozen_orders'
import { approveRequest } from '#approvals/actions/approve_request'
import { attachStatementLine } from '#reconciliation/actions/attach_statement_line'
import { receiveLine, lineRow } from '#tests/helpers/lines'
import { verifyLedger } from '#ledger/verify'
import { cliActor, type Actor } from '#core/actor'
import { byField, refusal } from '#tests/helpers/actions'
import {
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
} from '#tests/helpers/merchants'
import {
  auditRows,
  balanceOf,
  callbackRowsOf,
  createPayment,
  operatorActor,
  postingsOf,
  removeSlipImages,
} from '#tests/helpers/decisions'

const PAID = { reason_code: 'seen_on_statement', comment: 'credit seen in the KBank portal' }
const FREEZE = { reason_code: 'suspected_fraud', comment: 'payer on the fraud list' }
const UNFREEZE = { reason_code: 'review_cleared', comment: 'payer cleared by the bank' }

/** A deposit merchant on platform "test", whose four-eyes threshold is 50.00 THB. */
async function thresholdMerchant() {
  const who = await createDepositMerchant({ paymentFeeRateBps: 100 })
  await createDepositAccount()
  await configurePlatform({ code: 'test', four_eyes_threshold: '50.00' }, cliActor())
  return who
}

function approve(id: number, actor: Actor) {
  return approveRequest({ approval_request_id: id, reason_code: 'seen_on_statement' }, actor)
}

/** alice asks to mark a 100.00 THB payment paid: above the threshold, a request opens. */
async function pendingMarkPaid(alice: Actor) {
  const who = await thresholdMerchant()
  const order = await createPayment(who, '100.00')
  const result = await markPaymentPaid({ platform_order_id: order.platformOrderId, ...PAID }, alice)
  if (result.outcome !== 'approval_requested') throw new Error('expected an approval request')
  return { who, order, request: result.request }
}

test.group('four eyes: a freeze stops an approved payment', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
  })
  group.teardown(() => removeSlipImages())

  test('approving a mark-paid request on an order frozen meanwhile is refused with who froze it; the request stays pending; after the unfreeze it pays once', async ({
    assert,
  }) => {
    const alice = await operatorActor('alice@example.com', 'operator')
    const bob = await operatorActor('bob@example.com', 'operator')
    const carol = await operatorActor('carol@example.com', 'operator')
    const { who, order, request } = await pendingMarkPaid(alice.actor)

    await freezePayment({ platform_order_id: order.platformOrderId, ...FREEZE }, carol.actor)

    const error = await refusal(approve(request.id, bob.actor))
    assert.instanceOf(error, FrozenOrderRefusal)
    const message = byField(error).general
    assert.include(message, `${order.platformOrderId} is frozen (by carol@example.com at `)
    assert.include(message, 'unfreeze it before approving')
    assert.include(message, `approval request #${request.id} stays pending`)
    assert.notInclude(message, 'reject it')

    // Nothing written: still frozen, the request pending, no posting, no callback.
    await order.refresh()
    await request.refresh()
    assert.equal(order.status, 'freeze')
    assert.equal(order.statusBeforeFreeze, 'open')
    assert.isNull(order.paidAt)
    assert.equal(request.status, 'pending')
    assert.isNotNull(request.pendingKey)
    assert.isNull(request.decidedBy)
    assert.lengthOf(await postingsOf(order), 0)
    assert.lengthOf(await callbackRowsOf(order), 0)
    assert.lengthOf(await auditRows('approval.approve'), 0)
    assert.lengthOf(await auditRows('payment.mark_paid'), 0)
    assert.deepEqual(await balanceOf(who), { balance: 0, freeze_balance: 0, unsettle_balance: 0 })
    assert.deepEqual((await verifyLedger()).drifts, [])
    // Expiry behaves as today: a frozen order does not expire.
    assert.isFalse(await expirePayment(order.id, DateTime.utc().plus({ days: 1 })))

    // Unfrozen, the same request is approved and pays the order once.
    await unfreezePayment({ platform_order_id: order.platformOrderId, ...UNFREEZE }, carol.actor)
    const approved = await approve(request.id, bob.actor)
    assert.equal(approved.status, 'approved')
    await order.refresh()
    assert.equal(order.status, 'unsettled_paid')
    assert.lengthOf(await postingsOf(order), 1)
    assert.deepEqual(
      (await callbackRowsOf(order)).map((row) => row.status),
      ['PAID']
    )
    const again = await refusal(approve(request.id, bob.actor))
    assert.include(byField(again).general, 'was already approved by you at ')
    assert.lengthOf(await postingsOf(order), 1)
    assert.deepEqual(await balanceOf(who), { balance: 0, freeze_balance: 0, unsettle_balance: 99 })
    assert.deepEqual((await verifyLedger()).drifts, [])
  })

  test('a request opened on an order already frozen waits for the unfreeze too', async ({
    assert,
  }) => {
    const alice = await operatorActor('alice@example.com', 'operator')
    const bob = await operatorActor('bob@example.com', 'operator')
    const who = await thresholdMerchant()
    const order = await createPayment(who, '100.00')
    await freezePayment({ platform_order_id: order.platformOrderId, ...FREEZE }, bob.actor)
    const result = await markPaymentPaid(
      { platform_order_id: order.platformOrderId, ...PAID },
      alice.actor
    )
    assert.equal(result.outcome, 'approval_requested')
    const error = await refusal(approve(result.request!.id, bob.actor))
    assert.instanceOf(error, FrozenOrderRefusal)
    assert.include(byField(error).general, 'by bob@example.com')
    await order.refresh()
    assert.equal(order.status, 'freeze')
    assert.lengthOf(await postingsOf(order), 0)
    assert.lengthOf(await callbackRowsOf(order), 0)
    assert.equal((await ApprovalRequest.findOrFail(result.request!.id)).status, 'pending')
  })

  test('attaching a statement line to an order frozen meanwhile waits for the unfreeze as well', async ({
    assert,
  }) => {
    const alice = await operatorActor('alice@example.com', 'operator')
    const bob = await operatorActor('bob@example.com', 'operator')
    const who = await thresholdMerchant()
    const order = await createPayment(who, '100.00')
    // Arrived a day before the order existed: no slot covers it, it waits unmatched.
    const line = await receiveLine(order.depositAccountId, {
      amount: order.transferAmount,
      lineAt: DateTime.utc().minus({ days: 1 }).toJSDate(),
    })
    const asked = await attachStatementLine(
      {
        statement_line_id: line.id,
        platform_order_id: order.platformOrderId,
        reason_code: 'customer_confirmed',
        comment: 'customer sent the transfer details',
      },
      alice.actor
    )
    assert.equal(asked.outcome, 'approval_requested')
    await freezePayment({ platform_order_id: order.platformOrderId, ...FREEZE }, bob.actor)

    const error = await refusal(approve(asked.request!.id, bob.actor))
    assert.instanceOf(error, FrozenOrderRefusal)
    assert.include(byField(error).general, `${order.platformOrderId} is frozen (by bob@example.com`)
    await order.refresh()
    assert.equal(order.status, 'freeze')
    assert.equal((await lineRow(line.id)).status, 'unmatched')
    assert.lengthOf(await postingsOf(order), 0)
    assert.lengthOf(await callbackRowsOf(order), 0)
    assert.equal((await ApprovalRequest.findOrFail(asked.request!.id)).status, 'pending')
    assert.deepEqual((await verifyLedger()).drifts, [])

    await unfreezePayment({ platform_order_id: order.platformOrderId, ...UNFREEZE }, bob.actor)
    await approve(asked.request!.id, bob.actor)
    await order.refresh()
    assert.equal(order.status, 'unsettled_paid')
    assert.lengthOf(await postingsOf(order), 1)
    assert.deepEqual((await verifyLedger()).drifts, [])
  })

  test('a freeze racing the approval: exactly one consistent outcome', async ({ assert }) => {
    for (let round = 0; round < 4; round += 1) {
      await resetDatabase()
      const asker = await operatorActor('alice@example.com', 'operator')
      const approver = await operatorActor('bob@example.com', 'operator')
      const freezer = await operatorActor('carol@example.com', 'operator')
      const { order, request } = await pendingMarkPaid(asker.actor)

      const [approval, freeze] = await Promise.allSettled([
        approve(request.id, approver.actor),
        freezePayment({ platform_order_id: order.platformOrderId, ...FREEZE }, freezer.actor),
      ])
      // The freeze always holds: of an open order, or of one just paid.
      assert.equal(freeze.status, 'fulfilled')
      await order.refresh()
      await request.refresh()
      assert.equal(order.status, 'freeze')
      const postings = await postingsOf(order)
      const callbacks = await callbackRowsOf(order)
      if (approval.status === 'fulfilled') {
        // Paid first, then frozen: paid once, the hold on a paid order.
        assert.equal(request.status, 'approved')
        assert.equal(order.statusBeforeFreeze, 'unsettled_paid')
        assert.lengthOf(postings, 1)
        assert.lengthOf(callbacks, 1)
      } else {
        // Frozen first: the approval saw it under the lock and wrote nothing.
        assert.instanceOf(approval.reason, FrozenOrderRefusal)
        assert.equal(request.status, 'pending')
        assert.equal(order.statusBeforeFreeze, 'open')
        assert.lengthOf(postings, 0)
        assert.lengthOf(callbacks, 0)
      }
      assert.deepEqual((await verifyLedger()).drifts, [])
    }
  })
})
