import vine from '@vinejs/vine'
import type { FieldContext } from '@vinejs/vine/types'
import db from '@adonisjs/lucid/services/db'
import MerchantIpWhitelistEntry from '#merchants/models/merchant_ip_whitelist_entry'
import { normalizeCidr, whitelistFor } from '#merchants/ip_whitelist'
import { lockMerchant } from '#merchants/merchant_rules'
import { merchantAuthChanged } from '#merchants/merchant_auth_changes'
import { recordAudit } from '#core/audit'
import { validateInput } from '#core/validation'
import type { Actor } from '#core/actor'
import { withDeadlockRetry } from '#core/db_retry'

/** An IPv4/IPv6 address or CIDR block; becomes its canonical "addr/prefix". */
const cidrBlock = vine.createRule((value, _options, field: FieldContext) => {
  const cidr = normalizeCidr(String(value))
  if (!cidr) {
    const list = field.wildCardPath.split('.')[0]
    return field.report(
      `${list}: "${value}" is not an IPv4/IPv6 address or CIDR block`,
      'cidr_block',
      field
    )
  }
  field.mutate(cidr, field)
})

export const editIpWhitelistValidator = vine.compile(
  vine.object({
    merchant_id: vine.string().trim(),
    add: vine.array(vine.any().use(cidrBlock())).optional(),
    remove: vine.array(vine.any().use(cidrBlock())).optional(),
    comment: vine.string().trim().maxLength(500).optional(),
  })
)

/**
 * Adds and removes source addresses or CIDR blocks the merchant may call
 * from (an empty whitelist accepts every source). Entries already listed (or
 * not listed, for a removal) are reported, not refused. Returns what changed
 * and the resulting list; audited with the list before and after.
 */
export async function editIpWhitelist(input: Record<string, unknown>, actor: Actor) {
  const data = await validateInput(editIpWhitelistValidator, input)
  return withDeadlockRetry(() =>
    db.transaction(async (trx) => {
      const merchant = await lockMerchant(trx, data.merchant_id)
      const before = await whitelistFor(merchant.id, trx)
      const list = [...before]
      const result = { added: [] as string[], alreadyListed: [] as string[] }
      const removal = { removed: [] as string[], notListed: [] as string[] }

      for (const cidr of data.add ?? []) {
        if (list.includes(cidr)) {
          result.alreadyListed.push(cidr)
          continue
        }
        await MerchantIpWhitelistEntry.create({ merchantId: merchant.id, cidr }, { client: trx })
        list.push(cidr)
        result.added.push(cidr)
      }
      for (const cidr of data.remove ?? []) {
        if (!list.includes(cidr)) {
          removal.notListed.push(cidr)
          continue
        }
        await MerchantIpWhitelistEntry.query({ client: trx })
          .where({ merchant_id: merchant.id, cidr })
          .delete()
        list.splice(list.indexOf(cidr), 1)
        removal.removed.push(cidr)
      }

      if (result.added.length + removal.removed.length > 0) {
        await merchantAuthChanged(trx, merchant.merchantId)
        await recordAudit(trx, actor, {
          action: 'merchant.ip_whitelist.edit',
          target: { type: 'merchant', id: merchant.merchantId },
          before: { ip_whitelist: before },
          after: { ip_whitelist: list },
          reason: { comment: data.comment },
        })
      }
      return { merchant, ...result, ...removal, whitelist: list }
    })
  )
}
