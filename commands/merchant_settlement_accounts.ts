import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'
import { runMerchantListEdit } from './_merchant_list_edit.js'

/**
 * Ace adapter of the edit-settlement-accounts action; with no flag it only
 * lists. A change applies at once (in the back-office it waits for a second
 * admin) and is recorded as a break-glass use: audited and notified to every
 * admin.
 */
export default class MerchantSettlementAccounts extends BaseCommand {
  static commandName = 'merchant:settlement-accounts'
  static description =
    'List, add or remove the bank accounts a merchant may settle to (a change is a break-glass use, notified to every admin)'
  static options: CommandOptions = { startApp: true }

  @args.string({ description: 'merchant_id' })
  declare merchantId: string

  @flags.array({ description: 'BANK:ACCOUNT_NO to allow, e.g. KBANK:1234567890 (repeatable)' })
  declare add?: string[]

  @flags.array({ description: 'BANK:ACCOUNT_NO to remove (repeatable)' })
  declare remove?: string[]

  @flags.string({ description: 'Why (kept in the audit log)' })
  declare comment?: string

  async run() {
    const { editSettlementAccounts } = await import('#merchants/actions/edit_settlement_accounts')
    const { settlementRestriction } = await import('#merchants/settlement_accounts')
    await runMerchantListEdit(this, editSettlementAccounts, async (result) => {
      const id = result.merchant.merchantId
      const { required } = await settlementRestriction(result.merchant.id)
      if (result.added.length + result.removed.length > 0) {
        this.logger.warning('break-glass: recorded in the audit log and notified to every admin')
      }
      console.log(
        result.settlementAccounts.length > 0
          ? `${id} settles only to: ${result.settlementAccounts.join(', ')}`
          : required
            ? `${id}: no registered settlement account, every settlement is refused until one is`
            : `${id}: no settlement account ever registered, any destination is accepted`
      )
    })
  }
}
