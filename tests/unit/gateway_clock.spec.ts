import { test } from '@japa/runner'
import { readdir } from 'node:fs/promises'
import { DateTime } from 'luxon'
import type { LucidModel } from '@adonisjs/lucid/types/model'
import {
  formatGatewayDateTime,
  formatUtcSqlDateTime,
  gatewayDateStamp,
  gatewayMinuteOfDay,
  gatewayPeriodStarts,
  GATEWAY_ZONE,
} from '#core/clock'

/**
 * The hot paths' date strings and period starts (app/core/clock.ts) are
 * arithmetic on the instant; they must say what Luxon's zone conversion says
 * for every instant, around midnight and the hour included.
 */
function instants() {
  const fixed = [
    '2026-11-26T16:59:59.999Z', // 23:59:59.999 in Bangkok
    '2026-11-26T17:00:00.000Z', // midnight in Bangkok
    '2026-12-31T16:59:59.000Z',
    '2026-12-31T17:00:00.000Z', // new year in Bangkok, still 2026 in UTC
    '2024-02-28T17:00:00.000Z', // 29 February in Bangkok
    '2026-11-27T03:00:00.000Z',
    '1970-01-01T00:00:00.000Z',
  ].map((iso) => new Date(iso).getTime())
  // Deterministic spread over 2000-2060, not Math.random: a failure reruns the same.
  let seed = 12345
  const spread = Array.from({ length: 2000 }, () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31
    return Date.UTC(2000, 0, 1) + Math.floor((seed / 2 ** 31) * 60 * 365.25 * 86_400_000)
  })
  return [...fixed, ...spread]
}

test.group('Gateway clock', () => {
  test('GMT+7 strings, dates, minutes and period starts equal Luxon zone conversion', ({
    assert,
  }) => {
    for (const ms of instants()) {
      const utc = DateTime.fromMillis(ms, { zone: 'utc' })
      const local = utc.setZone(GATEWAY_ZONE)
      const label = utc.toISO()!
      assert.equal(formatGatewayDateTime(utc), local.toFormat('yyyy-LL-dd HH:mm:ss'), label)
      assert.equal(formatGatewayDateTime(new Date(ms)), local.toFormat('yyyy-LL-dd HH:mm:ss'))
      assert.equal(gatewayDateStamp(utc), local.toFormat('yyyyLLdd'), label)
      assert.equal(gatewayMinuteOfDay(utc), local.hour * 60 + local.minute, label)
      const starts = gatewayPeriodStarts(utc)
      assert.equal(starts.hourStart.getTime(), local.startOf('hour').toMillis(), label)
      assert.equal(starts.dayStart.getTime(), local.startOf('day').toMillis(), label)
      assert.equal(formatUtcSqlDateTime(local), utc.toFormat('yyyy-LL-dd HH:mm:ss'), label)
    }
    assert.equal(formatGatewayDateTime(new Date('2026-11-26T17:00:00Z')), '2026-11-27 00:00:00')
    assert.equal(gatewayDateStamp(new Date('2026-12-31T17:00:00Z')), '20270101')
    assert.isNull(formatGatewayDateTime(null))
    assert.isNull(formatGatewayDateTime(new Date(Number.NaN)))
  })

  test('every DATETIME column of every model is written as UTC (dateTimeColumn)', async ({
    assert,
  }) => {
    const root = new URL('../../app/', import.meta.url)
    const files = (await readdir(root, { recursive: true })).filter((path) =>
      /(^|\/)models\/[^/]+\.ts$/.test(path)
    )
    assert.isAbove(files.length, 10)
    const prepares = new Set<unknown>()
    for (const file of files) {
      const { default: model } = (await import(new URL(file, root).href)) as {
        default: LucidModel
      }
      for (const [name, column] of model.$columnsDefinitions) {
        if (column.meta?.type !== 'datetime') continue
        prepares.add(column.prepare)
        // Lucid's own prepare would write the wall time, 2026-11-27 06:30:00.
        const bangkok = DateTime.fromISO('2026-11-27T06:30:00', { zone: GATEWAY_ZONE })
        assert.equal(
          column.prepare?.(bangkok, name, new model()),
          '2026-11-26 23:30:00',
          `${model.name}.${name}`
        )
      }
    }
    assert.equal(prepares.size, 1, 'one prepare for every DATETIME column: dateTimeColumn()')
  })
})
