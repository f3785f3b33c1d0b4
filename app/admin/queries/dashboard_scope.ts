import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import { GATEWAY_ZONE } from '#core/clock'
import Platform from '#merchants/models/platform'
import Merchant from '#merchants/models/merchant'

/**
 * What the dashboard's figures cover: the platform and merchant its selects
 * choose, the merchants that makes (each query reads them from the
 * merchant-first indexes), and the window of today and the 6 Bangkok days
 * before it.
 */

const DAYS = 7

/** The dashboard's selects (GET ?platform=&merchant=); null: every one. */
export interface DashboardFilter {
  platformId: number | null
  merchantId: number | null
}

export const NO_FILTER: DashboardFilter = { platformId: null, merchantId: null }

/**
 * The merchants a filter covers (null: all, [] : none, e.g. a merchant of
 * another platform), and the suffix of the figures' rollup keys, so that
 * each filter keeps its own stored days.
 */
export interface DashboardScope {
  merchantIds: number[] | null
  key: string
}

export const ALL_MERCHANTS: DashboardScope = { merchantIds: null, key: '' }

/** A select's value when it names one of `ids`; anything else means "all". */
function chosenId(value: unknown, ids: number[]): number | null {
  const id = typeof value === 'string' && /^[1-9]\d{0,9}$/.test(value) ? Number(value) : null
  return id !== null && ids.includes(id) ? id : null
}

/**
 * The platforms and merchants the dashboard's selects offer, and the ones
 * chosen (?platform=, ?merchant=). The merchant select lists the chosen
 * platform's merchants only; a merchant of another platform (a stale URL)
 * is dropped rather than showing nothing.
 */
export async function dashboardChoices(platform: unknown, merchant: unknown) {
  const platforms = await Platform.query().orderBy('name').orderBy('id')
  const platformId = chosenId(
    platform,
    platforms.map((item) => item.id)
  )
  const merchantsQuery = Merchant.query().orderBy('name').orderBy('id')
  if (platformId !== null) merchantsQuery.where('platform_id', platformId)
  const merchants = await merchantsQuery
  const merchantId = chosenId(
    merchant,
    merchants.map((item) => item.id)
  )
  return {
    platforms: platforms.map((item) => ({ id: item.id, name: item.name })),
    merchants: merchants.map((item) => ({
      id: item.id,
      name: item.name,
      platformId: item.platformId,
    })),
    platformId,
    merchantId,
  }
}

/**
 * Orders carry their merchant, not their platform: a platform is the list
 * of its merchants (a few per platform), which each query then reads as
 * `merchant_id IN (…)` from the merchant-first indexes.
 */
export async function dashboardScope(filter: DashboardFilter): Promise<DashboardScope> {
  if (filter.merchantId === null && filter.platformId === null) return ALL_MERCHANTS
  const query = db.from('merchants').select('id').orderBy('id')
  if (filter.merchantId !== null) query.where('id', filter.merchantId)
  if (filter.platformId !== null) query.where('platform_id', filter.platformId)
  const rows = await query
  return {
    merchantIds: rows.map((row) => Number(row.id)),
    key: `:p${filter.platformId ?? ''}:m${filter.merchantId ?? ''}`,
  }
}

/** `AND <column> IN (…)` for a scope, with its bindings; nothing for every merchant. */
export function merchantsIn(scope: DashboardScope, column: string) {
  if (scope.merchantIds === null) return { sql: '', bindings: [] as number[] }
  if (scope.merchantIds.length === 0) return { sql: ' AND 1 = 0', bindings: [] as number[] }
  return {
    sql: ` AND ${column} IN (${scope.merchantIds.map(() => '?').join(', ')})`,
    bindings: scope.merchantIds,
  }
}

/** Today and the 6 days before it, as Bangkok calendar days. */
export interface DashboardWindow {
  now: DateTime
  /** Bangkok midnight of the first day, in UTC. */
  start: DateTime
  /** Bangkok midnight of today, in UTC. */
  todayStart: DateTime
  /** The days, oldest first, as yyyy-LL-dd in Bangkok. */
  days: string[]
}

export function dashboardWindow(now: DateTime = DateTime.utc()): DashboardWindow {
  const today = now.setZone(GATEWAY_ZONE).startOf('day')
  const first = today.minus({ days: DAYS - 1 })
  return {
    now: now.toUTC(),
    start: first.toUTC(),
    todayStart: today.toUTC(),
    days: Array.from({ length: DAYS }, (_, index) =>
      first.plus({ days: index }).toFormat('yyyy-LL-dd')
    ),
  }
}
