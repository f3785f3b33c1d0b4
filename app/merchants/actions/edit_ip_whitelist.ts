import vine from '@vinejs/vine'
import { approvalDetails } from '#approvals/approval_requests'
import type { FieldContext, Infer } from '@vinejs/vine/types'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import MerchantIpWhitelistEntry from '#merchants/models/merchant_ip_whitelist_entry'
import type ApprovalRequest from '#approvals/models/approval_request'
import { registerApprovableAction, type RunContext } from '#approvals/approvable_actions'
import { askOrApplyFromShell } from '#approvals/maker_checker'
import { normalizeCidr, whitelistFor } from '#merchants/ip_whitelist'
import { lockMerchant, merchantTarget } from '#merchants/merchant_rules'
import { merchantAuthChanged } from '#merchants/merchant_auth_changes'
import { recordAudit } from '#core/audit'
import { ActionError, validateInput } from '#core/validation'
import type { Actor } from '#core/actor'
import { inTransaction } from '#core/transaction'

export const IP_WHITELIST_ACTION = 'merchant.ip_whitelist'
export const IP_WHITELIST_KIND = 'ip_whitelist'

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

const schema = vine.object({
  merchant_id: vine.string().trim(),
  add: vine.array(vine.any().use(cidrBlock())).optional(),
  remove: vine.array(vine.any().use(cidrBlock())).optional(),
  comment: vine.string().trim().maxLength(500).optional(),
})
export const editIpWhitelistValidator = vine.compile(schema)
export type IpWhitelistData = Infer<typeof schema>

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
  const merchant = await lockMerchant(trx, data.merchant_id)
  const before = await whitelistFor(merchant.id, trx)
  const add = [...new Set(data.add ?? [])]
  const remove = [...new Set(data.remove ?? [])]
  const added = add.filter((cidr) => !before.includes(cidr))
  const alreadyListed = add.filter((cidr) => before.includes(cidr))
  const removed = remove.filter((cidr) => before.includes(cidr))
  const notListed = remove.filter((cidr) => !before.includes(cidr))
  const after = [...before.filter((cidr) => !removed.includes(cidr)), ...added]
  return {
    merchant,
    before,
    after,
    added,
    removed,
    alreadyListed,
    notListed,
    target: merchantTarget(merchant),
  }
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
  const { request } = context
  await recordAudit(trx, context.actor, {
    action: 'merchant.ip_whitelist.edit',
    target: { type: 'merchant', id: merchant.merchantId },
    before: { ip_whitelist: before },
    after: { ip_whitelist: after },
    reason: { comment: data.comment },
    details: approvalDetails(request),
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
    const result = {
      merchant,
      added,
      removed,
      alreadyListed,
      notListed,
      whitelist: before,
      request: null as ApprovalRequest | null,
    }
    if (added.length + removed.length === 0) return result
    const stored: IpWhitelistData = {
      merchant_id: merchant.merchantId,
      ...(added.length > 0 ? { add: added } : {}),
      ...(removed.length > 0 ? { remove: removed } : {}),
      ...(data.comment ? { comment: data.comment } : {}),
    }
    const run = () => runIpWhitelist(trx, prepared, stored, { actor, request: null })
    if (onlyNarrows(before, after, added)) {
      await run()
      return { ...result, whitelist: after }
    }
    const outcome = await askOrApplyFromShell(trx, {
      action: IP_WHITELIST_ACTION,
      target: prepared.target,
      input: stored,
      prepared,
      actor,
      reason: { comment: data.comment },
      field: added.length > 0 ? 'add' : null,
      summary: `${describe(stored)}: it accepts calls from ${listed(after)}`,
      run,
    })
    if (outcome.request) return { ...result, request: outcome.request }
    return { ...result, whitelist: after }
  })
}

registerApprovableAction<IpWhitelistData, IpWhitelistPrepared>({
  name: IP_WHITELIST_ACTION,
  kind: IP_WHITELIST_KIND,
  approverRole: 'admin',
  sensitive: true,
  describe,
  change: (_data, prepared) => ({
    before: { ip_whitelist: listed(prepared.before) },
    after: { ip_whitelist: listed(prepared.after) },
  }),
  validate: (input) => validateInput(editIpWhitelistValidator, input),
  prepare: async (trx, data) => {
    const prepared = await prepareIpWhitelist(trx, data)
    if (prepared.added.length + prepared.removed.length === 0) {
      throw ActionError.general(
        `the IP whitelist of merchant ${data.merchant_id} already is ${listed(prepared.before)}: nothing left to change`
      )
    }
    return prepared
  },
  run: (trx, prepared, data, context) => runIpWhitelist(trx, prepared, data, context),
})
