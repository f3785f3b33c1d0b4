import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import PayoutOrder from '#payouts/models/payout_order'
import { collectBankAnswer, dispatchPayout } from '#payouts/actions/dispatch_payout'
import { releasePayoutHold } from '#payouts/actions/complete_payout'
import { orderTimeline } from '#core/order_events'
import { queue } from '#core/queue/queue_manager'
import {
  authBody,
  createPayoutMerchant,
  PAYOUT_FIELDS,
  resetDatabase,
  signedPost,
} from '#tests/helpers/merchants'

async function timeline(order: PayoutOrder) {
  return (await orderTimeline('withdraw', order.id)).map((event) => [
    event.fromStatus,
    event.toStatus,
    event.actor,
    event.reason,
  ])
}

test.group('order timeline: withdrawal', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    // No worker here: the sandbox bank's answer is collected by the test.
    return () => queue('payouts').obliterate({ force: true })
  })
  group.each.timeout(60_000)

  test('created, dispatched, pending, hold released, success: one event each, in order', async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(1000_00)
    const response = await signedPost('/withdraw/create', who, authBody(who, PAYOUT_FIELDS))
    assert.equal(response.status, 200, response.text)
    const order = await PayoutOrder.findByOrFail(
      'platform_order_id',
      response.json.data.platform_order_id
    )
    const merchant = `merchant:${who.merchantId}`

    assert.equal(await dispatchPayout(order.id), 'pending')
    // The bank stays silent past the hold period: the hold goes back to balance.
    await PayoutOrder.query()
      .where('id', order.id)
      .update({ hold_expires_at: DateTime.utc().minus({ seconds: 1 }).toJSDate() })
    assert.isTrue(await releasePayoutHold(order.id))
    // Then the bank answers (the sandbox bank decides after its delay from creation).
    await PayoutOrder.query()
      .where('id', order.id)
      .update({ created_at: DateTime.utc().minus({ hours: 1 }).toJSDate() })
    assert.isTrue(await collectBankAnswer(order.id))

    assert.deepEqual(await timeline(order), [
      [null, 'new', merchant, null],
      ['new', 'queue', 'system', 'dispatched'],
      ['queue', 'pending', 'system', 'sandbox: transfer accepted'],
      ['pending', 'pending', 'system', 'hold released: no final answer within the hold period'],
      ['pending', 'success', 'system', 'the bank confirmed the transfer'],
    ])
    await order.refresh()
    assert.equal(order.status, 'success')
    assert.equal(order.holdState, 'consumed')
  })
})
