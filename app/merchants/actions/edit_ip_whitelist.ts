import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import MerchantIpWhitelistEntry from '#merchants/models/merchant_ip_whitelist_entry'
import type { RunContext } from '#approvals/approvable_actions'
import { normalizeCidr, whitelistFor } from '#merchants/ip_whitelist'
import { merchantAuthChanged } from '#merchants/merchant_auth_changes'
import {
  applyListEdit,
  listEditValidator,
  prepareListEdit,
  recordListEdit,
  registerListEdit,
  type ListEditData,
} from '#merchants/list_edits'
import { validateInput } from '#core/validation'
import type { Actor } from '#core/actor'
import { inTransaction } from '#core/transaction'

export const IP_WHITELIST_ACTION = 'merchant.ip_whitelist'
export const IP_WHITELIST_KIND = 'ip_whitelist'

/** Entries: IPv4/IPv6 addresses or CIDR blocks, each becoming its canonical "addr/prefix". */
export const editIpWhitelistValidator = listEditValidator(
  normalizeCidr,
  'is not an IPv4/IPv6 address or CIDR block'
)
export type IpWhitelistData = ListEditData

const listed = (list: string[]) => (list.length > 0 ? list.join(', ') : 'none: every source')

/**
 * Whether the change can only stop calls: the list stays non-empty and no
 * address joins a list that had some (a first entry narrows "every source"
 * to it). Anything else (an address added to a list, the last one removed)
 * lets more sources call with the merchant's credentials.
 */
export function onlyNarrows(before: string[], after: string[], added: string[]) {
  return after.length > 0 && (before.length === 0 || added.length === 0)
}

/** Locks the merchant and works out the change against its list now (the re-check on approval). */
export async function prepareIpWhitelist(trx: TransactionClientContract, data: IpWhitelistData) {
  return prepareListEdit(trx, data, async (merchant) => ({
    list: await whitelistFor(merchant.id, trx),
  }))
}
export type IpWhitelistPrepared = Awaited<ReturnType<typeof prepareIpWhitelist>>

/** Writes the change; audited with the list before and after. */
export async function runIpWhitelist(
  trx: TransactionClientContract,
  prepared: IpWhitelistPrepared,
  data: IpWhitelistData,
  context: RunContext
) {
  const { merchant, before, after, added, removed } = prepared
  for (const cidr of added) {
    await MerchantIpWhitelistEntry.create({ merchantId: merchant.id, cidr }, { client: trx })
  }
  if (removed.length > 0) {
    await MerchantIpWhitelistEntry.query({ client: trx })
      .where('merchant_id', merchant.id)
      .whereIn('cidr', removed)
      .delete()
  }
  await merchantAuthChanged(trx, merchant.merchantId)
  await recordListEdit(trx, context, {
    action: 'merchant.ip_whitelist.edit',
    merchant,
    list: 'ip_whitelist',
    before,
    after,
    comment: data.comment,
  })
  return { ip_whitelist: after }
}

function describe(data: IpWhitelistData) {
  const parts = [
    data.add?.length ? `add ${data.add.join(', ')} to` : '',
    data.remove?.length ? `remove ${data.remove.join(', ')} from` : '',
  ].filter(Boolean)
  return `${parts.join(' and ')} the IP whitelist of merchant ${data.merchant_id}`
}

/**
 * Adds and removes source addresses or CIDR blocks the merchant may call
 * from (an empty whitelist accepts every source). Entries already listed (or
 * not listed, for a removal) are reported, not refused.
 *
 * A change that only narrows who may call (onlyNarrows) applies at once,
 * from the back-office too. One that lets more sources call (an address
 * added to a list, the last one removed) opens an approval request in the
 * back-office that another admin carries out as stored; from the command
 * line it applies at once, recorded as a break-glass use. Returns what
 * changed (or was asked), the list now, and the request opened.
 */
export async function editIpWhitelist(input: Record<string, unknown>, actor: Actor) {
  const data = await validateInput(editIpWhitelistValidator, input)
  return inTransaction(async (trx) => {
    const prepared = await prepareIpWhitelist(trx, data)
    const { merchant, before, after, added, removed, alreadyListed, notListed } = prepared
    const { request, applied } = await applyListEdit(trx, {
      action: IP_WHITELIST_ACTION,
      data,
      prepared,
      actor,
      atOnce: onlyNarrows(before, after, added),
      summary: (stored) => `${describe(stored)}: it accepts calls from ${listed(after)}`,
      run: (stored) => runIpWhitelist(trx, prepared, stored, { actor, request: null }),
    })
    return {
      merchant,
      added,
      removed,
      alreadyListed,
      notListed,
      whitelist: applied ? after : before,
      request,
    }
  })
}

registerListEdit<IpWhitelistPrepared>({
  name: IP_WHITELIST_ACTION,
  kind: IP_WHITELIST_KIND,
  describe,
  change: (_data, prepared) => ({
    before: { ip_whitelist: listed(prepared.before) },
    after: { ip_whitelist: listed(prepared.after) },
  }),
  validate: (input) => validateInput(editIpWhitelistValidator, input),
  prepare: prepareIpWhitelist,
  unchanged: (data, prepared) =>
    `the IP whitelist of merchant ${data.merchant_id} already is ${listed(prepared.before)}: nothing left to change`,
  run: (trx, prepared, data, context) => runIpWhitelist(trx, prepared, data, context),
})
