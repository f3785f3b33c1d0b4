import vine from '@vinejs/vine'
import { approvalDetails } from '#approvals/approval_requests'
import type { FieldContext, Infer } from '@vinejs/vine/types'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type ApprovalRequest from '#approvals/models/approval_request'
import { registerApprovableAction, type RunContext } from '#approvals/approvable_actions'
import { askOrApplyFromShell } from '#approvals/maker_checker'
import {
  parseSettlementAccount,
  settlementAccountText,
  settlementRestriction,
} from '#merchants/settlement_accounts'
import { lockMerchant, merchantTarget } from '#merchants/merchant_rules'
import { recordAudit } from '#core/audit'
import { ActionError, validateInput } from '#core/validation'
import type { Actor } from '#core/actor'
import { inTransaction } from '#core/transaction'

export const SETTLEMENT_ACCOUNTS_ACTION = 'merchant.settlement_accounts'
export const SETTLEMENT_ACCOUNTS_KIND = 'settlement_accounts'

/** "BANK:ACCOUNT_NO"; becomes its canonical form (digits only). */
const settlementAccount = vine.createRule((value, _options, field: FieldContext) => {
  const account = parseSettlementAccount(String(value))
  if (!account) {
    const list = field.wildCardPath.split('.')[0]
    return field.report(
      `${list}: "${value}" is not BANK:ACCOUNT_NO with a known bank code and 10 to 15 digits`,
      'settlement_account',
      field
    )
  }
  field.mutate(settlementAccountText(account), field)
})

const schema = vine.object({
  merchant_id: vine.string().trim(),
  add: vine.array(vine.any().use(settlementAccount())).optional(),
  remove: vine.array(vine.any().use(settlementAccount())).optional(),
  comment: vine.string().trim().maxLength(500).optional(),
})
export const editSettlementAccountsValidator = vine.compile(schema)
export type SettlementAccountsData = Infer<typeof schema>

/** A list as the request card shows it. */
const listed = (accounts: string[], empty: string) =>
  accounts.length > 0 ? accounts.join(', ') : empty

/**
 * Locks the merchant and works out what the change does to its list now:
 * removing an account that is not registered is refused; adding one that is
 * changes nothing. On approval this is the re-check against the list as it
 * is then.
 */
export async function prepareSettlementAccounts(
  trx: TransactionClientContract,
  data: SettlementAccountsData
) {
  const merchant = await lockMerchant(trx, data.merchant_id)
  const { required, accounts: before } = await settlementRestriction(merchant.id, trx)
  const missing = (data.remove ?? []).filter((entry) => !before.includes(entry))
  if (missing.length > 0) {
    throw new ActionError(
      missing.map((entry) => ({
        field: 'remove',
        message: `remove: ${entry} is not a registered settlement account`,
      }))
    )
  }
  const added = [...new Set(data.add ?? [])].filter((entry) => !before.includes(entry))
  const removed = [...new Set(data.remove ?? [])]
  const after = [...before.filter((entry) => !removed.includes(entry)), ...added]
  return { merchant, required, before, after, added, removed, target: merchantTarget(merchant) }
}
export type SettlementAccountsPrepared = Awaited<ReturnType<typeof prepareSettlementAccounts>>

/**
 * Writes the change: the accounts added and removed, and the merchant's
 * restriction (once an account was registered it settles only to registered
 * ones, none included); audited with the list before and after.
 */
export async function runSettlementAccounts(
  trx: TransactionClientContract,
  prepared: SettlementAccountsPrepared,
  data: SettlementAccountsData,
  context: RunContext
) {
  const { merchant, before, after, added, removed } = prepared
  for (const entry of added) {
    const [bank, accountNo] = entry.split(':')
    await trx.table('merchant_settlement_accounts').insert({
      merchant_id: merchant.id,
      bank,
      account_no: accountNo,
      created_at: new Date(),
    })
  }
  for (const entry of removed) {
    const [bank, accountNo] = entry.split(':')
    await trx
      .from('merchant_settlement_accounts')
      .where({ merchant_id: merchant.id, bank, account_no: accountNo })
      .delete()
  }
  await trx
    .from('merchants')
    .where('id', merchant.id)
    .update({ settlement_accounts_required: true })
  const { request } = context
  await recordAudit(trx, context.actor, {
    action: 'merchant.settlement_accounts.edit',
    target: { type: 'merchant', id: merchant.merchantId },
    before: { settlement_accounts: before },
    after: { settlement_accounts: after },
    reason: { comment: data.comment },
    details: approvalDetails(request),
  })
  return { settlement_accounts: after }
}

function describe(data: SettlementAccountsData) {
  const parts = [
    data.add?.length ? `register ${data.add.join(', ')}` : '',
    data.remove?.length ? `remove ${data.remove.join(', ')}` : '',
  ].filter(Boolean)
  return `${parts.join(' and ')} as settlement account${(data.add?.length ?? 0) + (data.remove?.length ?? 0) === 1 ? '' : 's'} of merchant ${data.merchant_id}`
}

/**
 * Registers and removes the bank accounts the merchant may settle to. Where
 * money may go is never one person's decision: in the back-office the change
 * opens an approval request that another admin carries out as stored; from
 * the command line it applies at once, recorded as a break-glass use.
 * Adding a registered account changes nothing (no request); removing one
 * that is not registered is refused. Returns the list now, what was asked,
 * and the request opened (null when applied or nothing changed).
 */
export async function editSettlementAccounts(input: Record<string, unknown>, actor: Actor) {
  const data = await validateInput(editSettlementAccountsValidator, input)
  return inTransaction(async (trx) => {
    const prepared = await prepareSettlementAccounts(trx, data)
    const { merchant, before, after, added, removed } = prepared
    const result = {
      merchant,
      added,
      removed,
      settlementAccounts: before,
      request: null as ApprovalRequest | null,
    }
    if (added.length + removed.length === 0) return result
    const stored: SettlementAccountsData = {
      merchant_id: merchant.merchantId,
      ...(added.length > 0 ? { add: added } : {}),
      ...(removed.length > 0 ? { remove: removed } : {}),
      ...(data.comment ? { comment: data.comment } : {}),
    }
    const outcome = await askOrApplyFromShell(trx, {
      action: SETTLEMENT_ACCOUNTS_ACTION,
      target: prepared.target,
      input: stored,
      prepared,
      actor,
      reason: { comment: data.comment },
      field: added.length > 0 ? 'add' : null,
      summary: `${describe(stored)}: it settles only to ${listed(after, 'no account (every settlement refused)')}`,
      run: () => runSettlementAccounts(trx, prepared, stored, { actor, request: null }),
    })
    if (outcome.request) return { ...result, request: outcome.request }
    return { ...result, settlementAccounts: after }
  })
}

registerApprovableAction<SettlementAccountsData, SettlementAccountsPrepared>({
  name: SETTLEMENT_ACCOUNTS_ACTION,
  kind: SETTLEMENT_ACCOUNTS_KIND,
  approverRole: 'admin',
  sensitive: true,
  describe,
  change: (_data, prepared) => ({
    before: {
      settlement_accounts: listed(
        prepared.before,
        prepared.required ? 'none: every settlement refused' : 'none: any account'
      ),
    },
    after: { settlement_accounts: listed(prepared.after, 'none: every settlement refused') },
  }),
  validate: (input) => validateInput(editSettlementAccountsValidator, input),
  prepare: async (trx, data) => {
    const prepared = await prepareSettlementAccounts(trx, data)
    if (prepared.added.length + prepared.removed.length === 0) {
      throw ActionError.general(
        `the settlement accounts of merchant ${data.merchant_id} already are ${listed(prepared.before, 'none')}: nothing left to change`
      )
    }
    return prepared
  },
  run: (trx, prepared, data, context) => runSettlementAccounts(trx, prepared, data, context),
})
