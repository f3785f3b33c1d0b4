import vine from '@vinejs/vine'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import Merchant from '#merchants/models/merchant'
import Platform from '#merchants/models/platform'
import { issueCredentials } from '#merchants/credentials'
import {
  MERCHANT_ID,
  MERCHANT_MESSAGES,
  ORDER_PREFIX,
  merchantSnapshot,
} from '#merchants/merchant_rules'
import { openMerchantAccounts } from '#ledger/ledger'
import { DIGITS, UPPER_ALPHANUMERIC, randomString } from '#core/random'
import { recordAudit } from '#core/audit'
import { isDuplicateKey } from '#core/db_retry'
import { ActionError, validateInput } from '#core/validation'
import type { Actor } from '#core/actor'
import { inTransaction } from '#core/transaction'

export const createMerchantValidator = vine.compile(
  vine.object({
    /** The code of the platform the merchant belongs to. */
    platform: vine.string().trim(),
    name: vine.string().trim().minLength(1).maxLength(120),
    /** Default: 3 random uppercase letters or digits, unused. */
    order_prefix: vine.string().trim().regex(ORDER_PREFIX).optional(),
    /** Default: M + 9 random digits, unused. */
    merchant_id: vine.string().trim().regex(MERCHANT_ID).optional(),
  })
)

/**
 * Creates a merchant with its ledger accounts, zero balance and first
 * credential pair in one transaction, audited without the credentials. The
 * token and secret are returned once and cannot be read back: only a hash
 * and a ciphertext are stored.
 */
export async function createMerchant(input: Record<string, unknown>, actor: Actor) {
  const data = await validateInput(createMerchantValidator, input, MERCHANT_MESSAGES)
  try {
    return await inTransaction(async (trx) => {
      const platform = await Platform.query({ client: trx }).where('code', data.platform).first()
      if (!platform) {
        throw ActionError.notFound('platform', `platform "${data.platform}" does not exist`)
      }
      const merchantId =
        data.merchant_id ??
        (await unusedValue(trx, 'merchant_id', () => `M${randomString(9, DIGITS)}`))
      const orderPrefix =
        data.order_prefix ??
        (await unusedValue(trx, 'order_prefix', () => randomString(3, UPPER_ALPHANUMERIC)))

      // Ids compare byte for byte, but two merchants whose ids differ only in
      // case would be one typo apart: an operator could configure the wrong one.
      const lookalike = await Merchant.query({ client: trx })
        .whereRaw('LOWER(merchant_id) = ?', [merchantId.toLowerCase()])
        .first()
      if (lookalike) {
        throw ActionError.field(
          'merchant_id',
          lookalike.merchantId === merchantId
            ? `merchant_id ${merchantId} is taken`
            : `merchant_id ${merchantId} differs only in case from ${lookalike.merchantId}; choose another`
        )
      }
      if (await Merchant.query({ client: trx }).where('order_prefix', orderPrefix).first()) {
        throw ActionError.field('order_prefix', `order_prefix ${orderPrefix} is taken`)
      }

      const merchant = await Merchant.create(
        { merchantId, platformId: platform.id, name: data.name, orderPrefix, status: 'active' },
        { client: trx }
      )
      await merchant.refresh() // the column defaults (fees, limits, TTL)
      await openMerchantAccounts(trx, merchant.id)
      const credentials = await issueCredentials(trx, merchant)
      await recordAudit(trx, actor, {
        action: 'merchant.create',
        target: { type: 'merchant', id: merchant.merchantId },
        after: { platform: platform.code, ...merchantSnapshot(merchant) },
      })
      return { merchant, platform, credentials }
    })
  } catch (error) {
    // Another merchant took the id or prefix between the check and the insert.
    if (isDuplicateKey(error)) {
      const field = String((error as Error).message).includes('order_prefix')
        ? 'order_prefix'
        : 'merchant_id'
      throw ActionError.field(field, `${field} is taken; try again`)
    }
    throw error
  }
}

async function unusedValue(
  trx: TransactionClientContract,
  column: 'merchant_id' | 'order_prefix',
  generate: () => string
) {
  for (let attempt = 0; attempt < 20; attempt++) {
    const candidate = generate()
    if (!(await Merchant.query({ client: trx }).where(column, candidate).first())) return candidate
  }
  throw ActionError.field(column, `no free ${column} found; give one`)
}
