import vine from '@vinejs/vine'
import Platform from '#merchants/models/platform'
import { PLATFORM_CODE, paymentPageDomain, platformSnapshot } from '#merchants/platform_rules'
import { recordAudit } from '#core/audit'
import { ActionError, validateInput } from '#core/validation'
import { isDuplicateKey } from '#core/db_retry'
import type { Actor } from '#core/actor'
import { inTransaction } from '#core/transaction'

export const createPlatformValidator = vine.compile(
  vine.object({
    code: vine.string().trim().regex(PLATFORM_CODE),
    name: vine.string().trim().minLength(1).maxLength(120).optional(),
    payment_page_domain: vine.any().use(paymentPageDomain()).optional(),
  })
)

const MESSAGES = {
  'code.regex': 'code: 2-32 lowercase letters, digits, "-" or "_", starting with a letter or digit',
}

/** Creates a platform (tenant); its name defaults to its code. Audited. */
export async function createPlatform(input: Record<string, unknown>, actor: Actor) {
  const data = await validateInput(createPlatformValidator, input, MESSAGES)
  try {
    return await inTransaction(async (trx) => {
      const platform = await Platform.create(
        {
          code: data.code,
          name: data.name ?? data.code,
          paymentPageDomain: data.payment_page_domain ?? null,
          depositEnabled: true,
        },
        { client: trx }
      )
      await recordAudit(trx, actor, {
        action: 'platform.create',
        target: { type: 'platform', id: platform.code },
        after: platformSnapshot(platform),
      })
      return platform
    })
  } catch (error) {
    if (isDuplicateKey(error))
      throw ActionError.field('code', `platform "${data.code}" already exists`)
    throw error
  }
}
