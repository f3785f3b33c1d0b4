import db from '@adonisjs/lucid/services/db'
import Platform from '#models/platform'
import Merchant from '#models/merchant'
import { issueCredentials, type IssuedCredentials } from '#services/credentials'
import { openMerchantAccounts } from '#ledger/ledger'
import { randomString, DIGITS, UPPER_ALPHANUMERIC } from '#services/random'
import { recordAudit } from '#services/audit'
import { isHostName } from '#services/operator_input'

export interface PlatformInput {
  code: string
  name: string
  paymentPageDomain?: string | null
}

export interface MerchantInput {
  platformCode: string
  name: string
  orderPrefix?: string
  merchantId?: string
}

const PLATFORM_CODE = /^[a-z0-9][a-z0-9_-]{1,31}$/
const ORDER_PREFIX = /^[A-Z0-9]{3}$/
const MERCHANT_ID = /^[A-Za-z0-9]{0,31}[0-9]$/

export class OnboardingError extends Error {}

export async function createPlatform(input: PlatformInput, actor: string) {
  if (!PLATFORM_CODE.test(input.code)) {
    throw new OnboardingError('Platform code: 2-32 lowercase letters, digits, "-" or "_"')
  }
  if (!input.name.trim()) throw new OnboardingError('Platform name is required')
  const domain = input.paymentPageDomain?.trim().toLowerCase() || null
  if (domain && !isHostName(domain)) {
    throw new OnboardingError('payment page domain must be a host name such as pay.example.com')
  }
  if (await Platform.findBy('code', input.code)) {
    throw new OnboardingError(`Platform "${input.code}" already exists`)
  }
  return db.transaction(async (trx) => {
    const platform = await Platform.create(
      {
        code: input.code,
        name: input.name.trim(),
        paymentPageDomain: domain,
        depositEnabled: true,
      },
      { client: trx }
    )
    await recordAudit(
      { actor, action: 'platform.create', subjectType: 'platform', subjectId: platform.code },
      trx
    )
    return platform
  })
}

/**
 * Creates a merchant with its ledger accounts, zero balance and first
 * credential pair in one transaction. The token and secret are returned once
 * and cannot be read back: only a hash and a ciphertext are stored.
 */
export async function createMerchant(
  input: MerchantInput,
  actor: string
): Promise<{ merchant: Merchant; credentials: IssuedCredentials }> {
  const platform = await Platform.findBy('code', input.platformCode)
  if (!platform) throw new OnboardingError(`Platform "${input.platformCode}" does not exist`)
  if (!input.name.trim()) throw new OnboardingError('Merchant name is required')
  if (input.orderPrefix !== undefined && !ORDER_PREFIX.test(input.orderPrefix)) {
    throw new OnboardingError('Order prefix: exactly 3 uppercase letters or digits')
  }
  if (input.merchantId !== undefined && !MERCHANT_ID.test(input.merchantId)) {
    throw new OnboardingError('merchant_id: up to 32 letters or digits, ending with a digit')
  }

  const merchantId =
    input.merchantId ?? (await unusedValue('merchant_id', () => `M${randomString(9, DIGITS)}`))
  const orderPrefix =
    input.orderPrefix ??
    (await unusedValue('order_prefix', () => randomString(3, UPPER_ALPHANUMERIC)))
  if (await Merchant.findBy('merchant_id', merchantId)) {
    throw new OnboardingError(`merchant_id ${merchantId} is taken`)
  }
  if (await Merchant.findBy('order_prefix', orderPrefix)) {
    throw new OnboardingError(`Order prefix ${orderPrefix} is taken`)
  }

  return db.transaction(async (trx) => {
    const merchant = await Merchant.create(
      {
        merchantId,
        platformId: platform.id,
        name: input.name.trim(),
        orderPrefix,
        status: 'active',
      },
      { client: trx }
    )
    await merchant.refresh()
    await openMerchantAccounts(trx, merchant.id)
    const credentials = await issueCredentials(trx, merchant)
    await recordAudit(
      {
        actor,
        action: 'merchant.create',
        subjectType: 'merchant',
        subjectId: merchant.merchantId,
        details: { platform: platform.code, order_prefix: orderPrefix },
      },
      trx
    )
    return { merchant, credentials }
  })
}

async function unusedValue(column: 'merchant_id' | 'order_prefix', generate: () => string) {
  for (let attempt = 0; attempt < 20; attempt++) {
    const candidate = generate()
    if (!(await Merchant.findBy(column, candidate))) return candidate
  }
  throw new OnboardingError(`Could not find a free ${column}`)
}
