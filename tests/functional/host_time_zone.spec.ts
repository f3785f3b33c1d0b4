import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import PayoutOrder from '#payouts/models/payout_order'
import {
  authBody,
  createPayoutMerchant,
  PAYOUT_FIELDS,
  resetDatabase,
  signedPost,
} from '#tests/helpers/merchants'

/**
 * DATETIME columns hold UTC whatever the host's zone (app/core/columns.ts):
 * Lucid's own column formatter wrote autoCreate/autoUpdate stamps as the
 * host's wall time, 7 hours ahead on a host with TZ=Asia/Bangkok, which broke
 * every payout's lifecycle there (the hold and stale checks read them back as
 * UTC). Node applies a change of process.env.TZ at once.
 */
test.group('a host whose TZ is Asia/Bangkok', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    const before = process.env.TZ
    process.env.TZ = 'Asia/Bangkok'
    return () => {
      if (before === undefined) delete process.env.TZ
      else process.env.TZ = before
    }
  })

  test('stores the timestamps of a withdrawal as UTC, as the connection reads them', async ({
    assert,
  }) => {
    assert.equal(new Date(Date.UTC(2026, 0, 1)).getHours(), 7, 'the zone change took')
    const who = await createPayoutMerchant(1000_00)
    const response = await signedPost('/withdraw/create', who, authBody(who, PAYOUT_FIELDS))
    assert.equal(response.status, 200, response.text)
    const id = response.json.data.platform_order_id
    // TIMESTAMPDIFF in the database itself: no driver or zone conversion in between.
    const [[row]] = await db.rawQuery(
      `SELECT TIMESTAMPDIFF(SECOND, created_at, UTC_TIMESTAMP()) AS created_ago,
              TIMESTAMPDIFF(SECOND, updated_at, UTC_TIMESTAMP()) AS updated_ago,
              TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(), hold_expires_at) AS hold_left
         FROM payout_orders WHERE platform_order_id = ?`,
      [id]
    )
    assert.isAtLeast(Number(row.created_ago), 0)
    assert.isAtMost(Number(row.created_ago), 60)
    assert.isAtMost(Math.abs(Number(row.updated_ago)), 60)
    assert.closeTo(Number(row.hold_left), 600, 60)
    const order = await PayoutOrder.findByOrFail('platform_order_id', id)
    assert.closeTo(order.createdAt.toMillis(), Date.now(), 60_000)
  })
})
