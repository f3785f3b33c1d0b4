import db from '@adonisjs/lucid/services/db'
import Merchant from '#merchants/models/merchant'
import Platform from '#merchants/models/platform'
import { merchantOverview, merchantWarnings } from '#merchants/merchant_rules'
import { credentialsOf, rotationsOf } from '#merchants/rotation_rules'
import { whitelistFor } from '#merchants/ip_whitelist'
import { settlementAccountsOf } from '#merchants/settlement_accounts'
import { readMerchantBalance } from '#ledger/ledger'
import { formatThb } from '#core/money'
import { formatGatewayDateTime } from '#core/clock'
import { DateTime } from 'luxon'

/** Filters of the merchants list (all optional). */
export interface MerchantFilters {
  /** Start of a merchant_id, or part of a name. */
  q?: string
  platform?: string
  status?: 'active' | 'suspended'
  sort?: MerchantSort
  dir?: 'asc' | 'desc'
}

/** Columns the list sorts by, each with the SQL it orders on (a whitelist). */
export const MERCHANT_SORTS = {
  merchant_id: 'merchants.merchant_id',
  name: 'merchants.name',
  platform: 'platforms.code',
  status: 'merchants.status',
  balance: 'merchant_balances.balance',
  created: 'merchants.id',
} as const
export type MerchantSort = keyof typeof MERCHANT_SORTS

/** Reads the list's filters from a query string, keeping only known values. */
export function merchantFilters(input: Record<string, unknown>): MerchantFilters {
  const text = (key: string) =>
    String(input[key] ?? '')
      .trim()
      .slice(0, 64) || undefined
  const sort = text('sort')
  const status = text('status')
  return {
    q: text('q'),
    platform: text('platform'),
    status: status === 'active' || status === 'suspended' ? status : undefined,
    sort: sort && sort in MERCHANT_SORTS ? (sort as MerchantSort) : undefined,
    dir: text('dir') === 'asc' ? 'asc' : text('dir') === 'desc' ? 'desc' : undefined,
  }
}

/**
 * A page of merchants with their platform and balance figures, in one query
 * (the balances are a projection kept beside each merchant: a join, not a
 * query per row). Newest first unless sorted.
 */
export async function merchantList(filters: MerchantFilters, page: number, perPage = 25) {
  const query = db
    .from('merchants')
    .join('platforms', 'platforms.id', 'merchants.platform_id')
    .leftJoin('merchant_balances', 'merchant_balances.merchant_id', 'merchants.id')
    .select(
      'merchants.merchant_id',
      'merchants.name',
      'merchants.status',
      'merchants.payment_enabled',
      'merchants.withdraw_enabled',
      'merchants.settlement_enabled',
      'merchants.deposit_group',
      'merchants.payout_route',
      'merchants.negative_balance_flag',
      'platforms.code as platform',
      'merchant_balances.balance',
      'merchant_balances.freeze_balance',
      'merchant_balances.unsettle_balance'
    )
  if (filters.q) {
    const q = filters.q.replace(/[\\%_]/g, (char) => `\\${char}`).toLowerCase()
    // merchant_id compares byte for byte: search it case-insensitively from its start.
    query.where((where) =>
      where
        .whereRaw('LOWER(merchants.merchant_id) LIKE ?', [`${q}%`])
        .orWhere('merchants.name', 'like', `%${q}%`)
    )
  }
  if (filters.platform) query.where('platforms.code', filters.platform)
  if (filters.status) query.where('merchants.status', filters.status)
  const dir = filters.dir ?? (filters.sort && filters.sort !== 'created' ? 'asc' : 'desc')
  query.orderBy(MERCHANT_SORTS[filters.sort ?? 'created'], dir)
  if (filters.sort && filters.sort !== 'created') query.orderBy('merchants.id', 'desc')

  const result = await query.paginate(page, perPage)
  const figure = (value: unknown) => (value === null ? null : formatThb(Number(value)))
  return {
    page: result,
    rows: result.all().map((row) => ({
      merchant_id: row.merchant_id as string,
      name: row.name as string,
      platform: row.platform as string,
      status: row.status as string,
      payment_enabled: Boolean(row.payment_enabled),
      withdraw_enabled: Boolean(row.withdraw_enabled),
      settlement_enabled: Boolean(row.settlement_enabled),
      deposit_group: row.deposit_group as string | null,
      payout_route: row.payout_route as string | null,
      negative_balance_flag: Boolean(row.negative_balance_flag),
      balance: figure(row.balance),
      freeze_balance: figure(row.freeze_balance),
      unsettle_balance: figure(row.unsettle_balance),
    })),
  }
}

/** Platform codes, for the list's filter and the create form. */
export async function platformCodes() {
  const platforms = await Platform.query().orderBy('code').select('code', 'name')
  return platforms.map((platform) => ({ code: platform.code, name: platform.name }))
}

const bangkok = (iso: string | null) => (iso ? formatGatewayDateTime(DateTime.fromISO(iso)) : null)

/**
 * Everything the merchant page shows: settings, warnings, balance, IP
 * whitelist, settlement accounts, credentials (hints and dates, never
 * values) and scheduled rotations, times in Bangkok time. Null: no merchant.
 */
export async function merchantPage(merchantId: string) {
  const merchant = await Merchant.findBy('merchant_id', merchantId)
  if (!merchant) return null
  const balance = await readMerchantBalance(merchant.id)
  const credentials = await credentialsOf(merchant.id)
  const rotations = await rotationsOf(merchant.id)
  return {
    merchant: await merchantOverview(merchant),
    warnings: await merchantWarnings(merchant),
    balance: {
      balance: formatThb(balance.balance),
      freeze_balance: formatThb(balance.freezeBalance),
      unsettle_balance: formatThb(balance.unsettleBalance),
    },
    ipWhitelist: await whitelistFor(merchant.id),
    settlementAccounts: await settlementAccountsOf(merchant.id),
    credentials: credentials.map((credential) => ({
      ...credential,
      created_at: bangkok(credential.created_at),
      expires_at: bangkok(credential.expires_at),
      revoked_at: bangkok(credential.revoked_at),
    })),
    rotations: rotations.map((rotation) => ({
      ...rotation,
      run_at: bangkok(rotation.run_at),
      done_at: bangkok(rotation.done_at),
      previous_valid_until: bangkok(rotation.previous_valid_until),
      revealed_at: bangkok(rotation.revealed_at),
    })),
  }
}

/** Platform id → its number of merchants. */
export async function merchantCountsByPlatform() {
  const counts = await db
    .from('merchants')
    .groupBy('platform_id')
    .select('platform_id')
    .count('* as total')
  return new Map(counts.map((row) => [row.platform_id, Number(row.total)]))
}
