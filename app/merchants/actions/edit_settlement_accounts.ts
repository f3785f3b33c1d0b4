import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type { RunContext } from '#approvals/approvable_actions'
import {
  parseSettlementAccount,
  settlementAccountText,
  settlementRestriction,
} from '#merchants/settlement_accounts'
import {
  applyListEdit,
  listEditValidator,
  prepareListEdit,
  recordListEdit,
  registerListEdit,
  type ListEditData,
} from '#merchants/list_edits'
import { ActionError, validateInput } from '#core/validation'
import type { Actor } from '#core/actor'
import { inTransaction } from '#core/transaction'

export const SETTLEMENT_ACCOUNTS_ACTION = 'merchant.settlement_accounts'
export const SETTLEMENT_ACCOUNTS_KIND = 'settlement_accounts'

/** Entries: "BANK:ACCOUNT_NO", each becoming its canonical form (digits only). */
export const editSettlementAccountsValidator = listEditValidator((text) => {
  const account = parseSettlementAccount(text)
  return account ? settlementAccountText(account) : null
}, 'is not BANK:ACCOUNT_NO with a known bank code and 10 to 15 digits')
export type SettlementAccountsData = ListEditData

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
  const prepared = await prepareListEdit(trx, data, async (merchant) => {
    const { required, accounts } = await settlementRestriction(merchant.id, trx)
    return { list: accounts, required }
  })
  const missing = (data.remove ?? []).filter((entry) => !prepared.before.includes(entry))
  if (missing.length > 0) {
    throw new ActionError(
      missing.map((entry) => ({
        field: 'remove',
        message: `remove: ${entry} is not a registered settlement account`,
      }))
    )
  }
  return prepared
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
  await recordListEdit(trx, context, {
    action: 'merchant.settlement_accounts.edit',
    merchant,
    list: 'settlement_accounts',
    before,
    after,
    comment: data.comment,
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
    const { request, applied } = await applyListEdit(trx, {
      action: SETTLEMENT_ACCOUNTS_ACTION,
      data,
      prepared,
      actor,
      summary: (stored) =>
        `${describe(stored)}: it settles only to ${listed(after, 'no account (every settlement refused)')}`,
      run: (stored) => runSettlementAccounts(trx, prepared, stored, { actor, request: null }),
    })
    return { merchant, added, removed, settlementAccounts: applied ? after : before, request }
  })
}

registerListEdit<SettlementAccountsPrepared>({
  name: SETTLEMENT_ACCOUNTS_ACTION,
  kind: SETTLEMENT_ACCOUNTS_KIND,
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
  prepare: prepareSettlementAccounts,
  unchanged: (data, prepared) =>
    `the settlement accounts of merchant ${data.merchant_id} already are ${listed(prepared.before, 'none')}: nothing left to change`,
  run: (trx, prepared, data, context) => runSettlementAccounts(trx, prepared, data, context),
})
