import { test } from '@japa/runner'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import PayoutOrder from '#payouts/models/payout_order'
import { dispatchPayout } from '#payouts/actions/dispatch_payout'
import { orderTimeline } from '#core/order_events'
import { ace, lastJsonLine } from '#tests/helpers/ace'
import {
  authBody,
  createPayoutMerchant,
  PAYOUT_FIELDS,
  resetDatabase,
  signedPost,
} from '#tests/helpers/merchants'

async function timeline(order: PayoutOrder) {
  return (await orderTimeline('settlement', order.id)).map((event) => [
    event.fromStatus,
    event.toStatus,
    event.actor,
    event.reason,
  ])
}

test.group('order timeline: settlement', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.timeout(60_000)

  test('created, dispatched, exported in a bulk file, failed by an operator: one event each', async ({
    assert,
    cleanup,
  }) => {
    const directory = await mkdtemp(join(tmpdir(), 'gw-timeline-'))
    cleanup(() => rm(directory, { recursive: true, force: true }))
    const who = await createPayoutMerchant(1000_00, { payoutRoute: 'bulk_file' })
    const response = await signedPost(
      '/thb-settlement/create',
      who,
      authBody(who, { ...PAYOUT_FIELDS, merchant_order_id: 'S1' })
    )
    assert.equal(response.status, 200, response.text)
    const order = await PayoutOrder.findByOrFail(
      'platform_order_id',
      response.json.data.platform_order_id
    )
    assert.equal(await dispatchPayout(order.id), 'queued')

    const exported = await ace('payouts:export', `--out=${directory}`, '--json')
    assert.equal(exported.code, 0, exported.output)
    const { batchId } = lastJsonLine(exported.stdout)
    const failed = await ace('payouts:complete', order.platformOrderId, '--fail', 'account_closed')
    assert.equal(failed.code, 0, failed.output)

    const events = await timeline(order)
    const operator = events[3][2]
    assert.match(String(operator), /^cli:/)
    assert.deepEqual(events, [
      [null, 'new', `merchant:${who.merchantId}`, null],
      ['new', 'queue', 'system', 'dispatched'],
      ['queue', 'pending', operator, `bulk file ${batchId}-KBANK.csv`],
      ['pending', 'failed', operator, 'account_closed'],
    ])
    await order.refresh()
    assert.equal(order.status, 'failed')
    assert.equal(order.holdState, 'returned')
  })
})
