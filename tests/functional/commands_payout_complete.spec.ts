import { test } from '@japa/runner'
import { ace } from '#tests/helpers/ace'
import db from '@adonisjs/lucid/services/db'
import PayoutOrder from '#models/payout_order'
import {
  authBody,
  createPayoutMerchant,
  PAYOUT_FIELDS,
  resetDatabase,
  signedPost,
} from '#tests/helpers/merchants'

test.group('payouts:complete', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.timeout(60_000)

  test('records a success or a failure by hand, once, with an audit entry', async ({ assert }) => {
    const who = await createPayoutMerchant(1000_00, {
      payoutRoute: 'bulk_file',
      withdrawFeeFlat: 5_00,
    })
    const ids = []
    for (const id of ['M1', 'M2']) {
      const response = await signedPost(
        '/withdraw/create',
        who,
        authBody(who, { ...PAYOUT_FIELDS, merchant_order_id: id })
      )
      ids.push(response.json.data.platform_order_id)
    }
    // Not pending yet (waiting for a bulk file): refused.
    const early = await ace('payouts:complete', ids[0], '--success')
    assert.notEqual(early.code, 0)
    assert.include(early.output, 'only a pending payout')

    await PayoutOrder.query().whereIn('platform_order_id', ids).update({ status: 'pending' })
    assert.equal((await ace('payouts:complete', ids[0], '--success')).code, 0)
    assert.equal((await ace('payouts:complete', ids[1], '--fail', 'account closed')).code, 0)
    const again = await ace('payouts:complete', ids[0], '--fail', 'x')
    assert.notEqual(again.code, 0)
    assert.notEqual((await ace('payouts:complete', ids[1])).code, 0, 'needs --success or --fail')

    const first = await PayoutOrder.findByOrFail('platform_order_id', ids[0])
    const second = await PayoutOrder.findByOrFail('platform_order_id', ids[1])
    assert.equal(first.status, 'success')
    assert.equal(second.status, 'failed')
    assert.equal(second.failureReason, 'account closed')
    const balance = (await signedPost('/balance', who, authBody(who))).json.data
    assert.deepEqual(balance, { balance: 895, freeze_balance: 0, unsettle_balance: 0 })
    const audits = await db.from('audit_logs').where('action', 'payout.complete')
    assert.lengthOf(audits, 2)
  })
})
