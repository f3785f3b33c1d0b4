import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import PaymentSlip from '#slips/models/payment_slip'
import { sandboxPay } from '#reconciliation/actions/sandbox_pay'
import { assignItems } from '#review/actions/assign_item'
import { slipQueue } from '#admin/queries/slip_queue'
import { verifyLedger } from '#ledger/verify'
import {
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
  TEST_ACTOR,
} from '#tests/helpers/merchants'
import {
  attachSlip,
  auditRows,
  callbackRowsOf,
  createPayment,
  operatorActor,
  postingsOf,
  removeSlipImages,
} from '#tests/helpers/decisions'

test.group('review queues: a statement line pays an order whose slip awaits review', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
  })
  group.teardown(() => removeSlipImages())

  test('the order is no longer awaiting review; its undecided slip is closed as approved by the statement and leaves the queue', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount()
    const { operator, actor } = await operatorActor('ops@example.com')
    const order = await createPayment(who, '250.00')
    const slip = await attachSlip(order)
    await order.refresh()
    assert.isTrue(order.awaitingReview)
    await assignItems(
      { queue: 'slips', item_ids: [String(slip.id)], operator_id: operator.id },
      actor
    )
    const before = await slipQueue({ page: 1, perPage: 25, mineOf: null })
    assert.deepEqual(
      before.rows.map((row) => row.slip_id),
      [slip.id]
    )

    await sandboxPay({ platform_order_id: order.platformOrderId }, TEST_ACTOR)

    await order.refresh()
    assert.equal(order.status, 'unsettled_paid')
    assert.isFalse(order.awaitingReview)
    const closed = await PaymentSlip.findOrFail(slip.id)
    assert.equal(closed.reviewDecision, 'approved')
    assert.isNull(closed.reviewedBy)
    assert.equal(closed.reviewReasonCode, 'seen_on_statement')
    assert.match(closed.reviewComment!, /^approved by statement line \d+$/)

    const audit = (await auditRows('slip.review')).filter(
      (row) => row.subject_id === String(slip.id)
    )
    assert.lengthOf(audit, 1)
    assert.equal(audit[0].actor, 'system')
    assert.equal(audit[0].after_values.review_decision, 'approved')
    assert.equal(audit[0].details.platform_order_id, order.platformOrderId)

    const after = await slipQueue({ page: 1, perPage: 25, mineOf: null })
    assert.lengthOf(after.rows, 0)
    assert.lengthOf(await db.from('queue_assignments'), 0)
    assert.lengthOf(await postingsOf(order), 1)
    assert.deepEqual(
      (await callbackRowsOf(order)).map((row) => row.status),
      ['PAID']
    )
    assert.lengthOf((await verifyLedger()).drifts, 0)
  })

  test('an order paid by its statement line without a slip is unchanged by the fix', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount()
    const order = await createPayment(who, '90.00')
    await sandboxPay({ platform_order_id: order.platformOrderId }, TEST_ACTOR)
    await order.refresh()
    assert.equal(order.status, 'unsettled_paid')
    assert.isFalse(order.awaitingReview)
    assert.lengthOf(await auditRows('slip.review'), 0)
  })
})
