import { test } from '@japa/runner'
import { DateTime, IANAZone } from 'luxon'
import { GATEWAY_ZONE } from '#core/clock'
import { plainLocalTime } from '#reconciliation/layouts/index'

/**
 * The statement import's fast reading of `YYYY-MM-DD HH:mm[:ss]` times
 * (app/reconciliation/layouts/index.ts) must give the instant Luxon gives,
 * and must actually be taken for the gateway's zone: when it silently fell
 * back to Luxon for every line, the import ran at two thirds of its speed.
 */
test.group('Statement line times', () => {
  test('a wall-clock time in the gateway zone reads as Luxon reads it, without Luxon', ({
    assert,
  }) => {
    for (const text of ['2026-11-26 10:15:30', '2026-01-01 00:00', '2024-02-29 23:59:59']) {
      const fast = plainLocalTime(text)
      assert.instanceOf(fast, Date, `${text}: the fast path was not taken`)
      const format = text.length === 16 ? 'yyyy-LL-dd HH:mm' : 'yyyy-LL-dd HH:mm:ss'
      const luxon = DateTime.fromFormat(text, format, { zone: GATEWAY_ZONE }).toJSDate()
      assert.equal(fast!.toISOString(), luxon.toISOString(), text)
    }
    assert.equal(plainLocalTime('2026-11-26 10:15:30')!.toISOString(), '2026-11-26T03:15:30.000Z')
  })

  test('impossible times and times near a zone change are left to Luxon', ({ assert }) => {
    assert.isUndefined(plainLocalTime('2026-04-31 10:00'))
    assert.isUndefined(plainLocalTime('2026-11-26 24:00'))
    assert.isUndefined(plainLocalTime('26-11-2026 10:00'))
    const newYork = IANAZone.create('America/New_York')
    assert.isUndefined(plainLocalTime('2026-03-08 02:30', newYork))
    assert.instanceOf(plainLocalTime('2026-06-08 02:30', newYork), Date)
  })
})
