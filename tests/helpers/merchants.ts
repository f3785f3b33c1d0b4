import db from '@adonisjs/lucid/services/db'
import { databaseName } from '#config/database'
import Platform from '#merchants/models/platform'
import { createPlatform } from '#merchants/actions/create_platform'
import { createMerchant } from '#merchants/actions/create_merchant'
import { signBody } from '#merchants/credentials'
import { epochSeconds } from '#core/clock'
import { postLedgerTransaction } from '#ledger/ledger'
import { rawRequest, type RawRequestOptions } from '#tests/helpers/http'
import type Merchant from '#merchants/models/merchant'
import PaymentOrder from '#payments/models/payment_order'
import { heldAmounts } from '#payments/deposit_slots'

export interface TestMerchant {
  merchant: Merchant
  merchantId: string
  token: string
  secret: string
}

const TABLES_TO_KEEP = new Set(['adonis_schema', 'adonis_schema_versions'])

let applicationTables: string[] | undefined

/**
 * Empties every application table; used before each test that writes. A
 * TRUNCATE is DDL (a few ms each, ~37 tables): one query asks which tables
 * hold a row, and only those are truncated, which also resets their ids.
 */
export async function resetDatabase() {
  if (!databaseName.endsWith('_test')) {
    throw new Error(`Refusing to empty ${databaseName}: test databases end with _test`)
  }
  if (!applicationTables) {
    const [rows] = await db.rawQuery('SHOW TABLES')
    applicationTables = rows
      .map((row: Record<string, string>) => Object.values(row)[0])
      .filter((t: string) => !TABLES_TO_KEEP.has(t))
  }
  const tables = applicationTables!
  const [[holding]] = await db.rawQuery(
    `SELECT ${tables.map((t, i) => `EXISTS (SELECT 1 FROM \`${t}\`) AS t${i}`).join(', ')}`
  )
  // A table whose rows were all deleted still has to start its ids at 1 again.
  const [counters] = await db.rawQuery(
    'SELECT TABLE_NAME AS name FROM information_schema.TABLES ' +
      'WHERE TABLE_SCHEMA = ? AND AUTO_INCREMENT > 1',
    [databaseName]
  )
  const numbered = new Set(counters.map((row: { name: string }) => row.name))
  const written = tables.filter((t, i) => Number(holding[`t${i}`]) === 1 || numbered.has(t))
  if (written.length === 0) return
  // One connection: FOREIGN_KEY_CHECKS is a session variable.
  await db.transaction(async (trx) => {
    await trx.rawQuery('SET FOREIGN_KEY_CHECKS = 0')
    try {
      for (const table of written) await trx.rawQuery(`TRUNCATE TABLE \`${table}\``)
    } finally {
      await trx.rawQuery('SET FOREIGN_KEY_CHECKS = 1')
    }
  })
  // Account ids start at 1 again: what the creates learnt of the old ones no longer applies.
  heldAmounts.clear()
}

/**
 * Changes every platform as an operator's edit does: through the model, whose
 * save drops the per-process copies the merchant API reads (Platform.cached).
 */
export async function updatePlatforms(fields: Partial<Platform>) {
  for (const platform of await Platform.all()) await platform.merge(fields).save()
}

/** The actor of what tests set up through the operator actions. */
export const TEST_ACTOR = { name: 'test' }

let sequence = 0

export async function createTestMerchant(platformCode = 'test'): Promise<TestMerchant> {
  if (!(await Platform.findBy('code', platformCode))) {
    await createPlatform(
      { code: platformCode, name: 'Test platform', payment_page_domain: 'pay.example.test' },
      TEST_ACTOR
    )
  }
  sequence += 1
  const { merchant, credentials } = await createMerchant(
    { platform: platformCode, name: `Test merchant ${sequence}` },
    TEST_ACTOR
  )
  return { merchant, merchantId: merchant.merchantId, ...credentials }
}

/** Credits a merchant account from the adjustments account, as an operator would. */
export async function creditMerchant(
  merchant: Merchant,
  account: 'available' | 'frozen' | 'unsettled',
  satang: number
) {
  await db.transaction((trx) =>
    postLedgerTransaction(trx, {
      kind: 'test_adjustment',
      legs: [
        { gateway: 'adjustments', amount: -satang },
        { merchantId: merchant.id, account, amount: satang },
      ],
    })
  )
}

let freshness = 0

/**
 * The current epoch seconds with a fraction that differs on every call, so
 * that two requests built in the same second are not byte-identical: the
 * gateway answers identical signed bytes with the first answer, without
 * running them. (A fractional `time` is valid; the server ignores the
 * fraction.)
 */
export function freshTime() {
  freshness = (freshness + 1) % 1_000_000
  return epochSeconds() + freshness / 1_000_000
}

/**
 * The JSON body of an authenticated call, serialised once. Each call is a
 * fresh request (see freshTime); send the returned string twice to send the same request again.
 */
export function authBody(
  who: TestMerchant,
  fields: Record<string, unknown> = {},
  time: unknown = freshTime()
) {
  return JSON.stringify({ merchant_id: who.merchantId, token: who.token, time, ...fields })
}

/** POSTs `body` signed with `secret` (default: the merchant's). */
export function signedPost(
  path: string,
  who: TestMerchant,
  body: string,
  options: RawRequestOptions & { secret?: string } = {}
) {
  const { secret, headers, ...rest } = options
  return rawRequest(path, {
    ...rest,
    body,
    headers: {
      'content-type': 'application/json',
      'x-signature': signBody(secret ?? who.secret, Buffer.from(body)),
      ...headers,
    },
  })
}

export interface DepositAccountFixture {
  depositGroup?: string
  channel?: 'qr' | 'transfer' | 'external'
  bank?: string
  accountNo?: string
  accountName?: string
  promptpayId?: string | null
  billerId?: string | null
  provider?: string | null
  providerConfig?: Record<string, unknown> | null
  minAmount?: number
  maxAmount?: number | null
  hourlyCountLimit?: number | null
  hourlyAmountLimit?: number | null
  dailyCountLimit?: number | null
  dailyAmountLimit?: number | null
  maxAdjustment?: number
  priority?: number
  active?: boolean
}

let accountSequence = 0

export async function createDepositAccount(fixture: DepositAccountFixture = {}) {
  const { default: DepositAccount } = await import('#payments/models/deposit_account')
  accountSequence += 1
  const channel = fixture.channel ?? 'qr'
  return DepositAccount.create({
    depositGroup: 'test-group',
    bank: 'KBANK',
    accountNo: `12300${String(accountSequence).padStart(5, '0')}`,
    accountName: `Deposit account ${accountSequence}`,
    promptpayId: channel === 'qr' ? '0812345678' : null,
    billerId: null,
    provider: channel === 'external' ? 'sandbox' : null,
    providerConfig: null,
    minAmount: 2000,
    maxAmount: null,
    hourlyCountLimit: null,
    hourlyAmountLimit: null,
    dailyCountLimit: null,
    dailyAmountLimit: null,
    maxAdjustment: 999,
    priority: 0,
    active: true,
    ...fixture,
    channel,
  })
}

/** A merchant whose payments draw from deposit group `test-group`. */
export async function createDepositMerchant(settings: Partial<Record<string, unknown>> = {}) {
  const who = await createTestMerchant()
  who.merchant.merge({ depositGroup: 'test-group', ...settings })
  await who.merchant.save()
  return who
}

/** A merchant paying out through the sandbox bank, with `balance` satang available. */
export async function createPayoutMerchant(
  balance = 0,
  settings: Partial<Record<string, unknown>> = {}
) {
  const who = await createTestMerchant()
  who.merchant.merge({ payoutRoute: 'sandbox', ...settings })
  await who.merchant.save()
  if (balance > 0) await creditMerchant(who.merchant, 'available', balance)
  return who
}

export const PAYOUT_FIELDS = {
  merchant_order_id: 'W1',
  amount: '100.00',
  bank: 'KBANK',
  account_name: 'Somchai Jaidee',
  account_no: '1234567890',
}

/** The same platform_order_id with another marker at index 3 (not String.replace: a prefix may hold the letter). */
export function withMarker(platformOrderId: string, marker: 'P' | 'W' | 'M') {
  return platformOrderId.slice(0, 3) + marker + platformOrderId.slice(4)
}

/**
 * A payment created through the merchant API, as its model: by default with
 * a notify_url, so callback rows are written. `fields` change the request's
 * body (`notify_url: undefined` leaves it out).
 */
export async function createPaymentOrder(
  who: TestMerchant,
  id: string,
  amount = '100.00',
  path = '/payment/create',
  fields: Record<string, unknown> = {}
) {
  const response = await signedPost(
    path,
    who,
    authBody(who, {
      merchant_order_id: id,
      amount,
      bank: 'SCB',
      account_name: 'Customer',
      account_no: '1234567890',
      notify_url: 'https://merchant.example.test/cb',
      ...fields,
    })
  )
  if (response.status !== 200) throw new Error(response.text)
  return PaymentOrder.findByOrFail('platform_order_id', response.json.data.platform_order_id)
}
