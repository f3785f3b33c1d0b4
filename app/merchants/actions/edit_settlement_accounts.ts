import vine from '@vinejs/vine'
import type { FieldContext } from '@vinejs/vine/types'
import db from '@adonisjs/lucid/services/db'
import {
  parseSettlementAccount,
  settlementAccountText,
  settlementAccountsOf,
} from '#merchants/settlement_accounts'
import { lockMerchant } from '#merchants/merchant_rules'
import { recordAudit } from '#core/audit'
import { ActionError, validateInput } from '#core/validation'
import type { Actor } from '#core/actor'
import { withDeadlockRetry } from '#core/db_retry'

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

export const editSettlementAccountsValidator = vine.compile(
  vine.object({
    merchant_id: vine.string().trim(),
    add: vine.array(vine.any().use(settlementAccount())).optional(),
    remove: vine.array(vine.any().use(settlementAccount())).optional(),
    comment: vine.string().trim().maxLength(500).optional(),
  })
)

/**
 * Registers and removes the bank accounts the merchant may settle to (none
 * registered: any account). Adding a registered account changes nothing;
 * removing one that is not registered is refused. Returns the resulting
 * list; audited with the list before and after.
 */
export async function editSettlementAccounts(input: Record<string, unknown>, actor: Actor) {
  const data = await validateInput(editSettlementAccountsValidator, input)
  return withDeadlockRetry(() =>
    db.transaction(async (trx) => {
      const merchant = await lockMerchant(trx, data.merchant_id)
      const before = await settlementAccountsOf(merchant.id, trx)
      const list = [...before]
      const added: string[] = []
      const removed: string[] = []

      const missing = (data.remove ?? []).filter((entry) => !list.includes(entry))
      if (missing.length > 0) {
        throw new ActionError(
          missing.map((entry) => ({
            field: 'remove',
            message: `remove: ${entry} is not a registered settlement account`,
          }))
        )
      }
      for (const entry of data.add ?? []) {
        if (list.includes(entry)) continue
        const [bank, accountNo] = entry.split(':')
        await trx.table('merchant_settlement_accounts').insert({
          merchant_id: merchant.id,
          bank,
          account_no: accountNo,
          created_at: new Date(),
        })
        list.push(entry)
        added.push(entry)
      }
      for (const entry of data.remove ?? []) {
        if (!list.includes(entry)) continue
        const [bank, accountNo] = entry.split(':')
        await trx
          .from('merchant_settlement_accounts')
          .where({ merchant_id: merchant.id, bank, account_no: accountNo })
          .delete()
        list.splice(list.indexOf(entry), 1)
        removed.push(entry)
      }

      if (added.length + removed.length > 0) {
        await recordAudit(trx, actor, {
          action: 'merchant.settlement_accounts.edit',
          target: { type: 'merchant', id: merchant.merchantId },
          before: { settlement_accounts: before },
          after: { settlement_accounts: list },
          reason: { comment: data.comment },
        })
      }
      return { merchant, added, removed, settlementAccounts: list }
    })
  )
}
