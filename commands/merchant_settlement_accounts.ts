import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/** Ace adapter of the edit-settlement-accounts action; with no flag it only lists. */
export default class MerchantSettlementAccounts extends BaseCommand {
  static commandName = 'merchant:settlement-accounts'
  static description =
    'List, add or remove the bank accounts a merchant may settle to (none registered: any account)'
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
    const { runAction } = await import('#core/cli')
    const { cliActor } = await import('#core/actor')
    await runAction(this, async () => {
      const result = await editSettlementAccounts(
        {
          merchant_id: this.merchantId,
          add: this.add,
          remove: this.remove,
          comment: this.comment,
        },
        cliActor()
      )
      const id = result.merchant.merchantId
      console.log(
        result.settlementAccounts.length === 0
          ? `${id}: no registered settlement accounts, any destination is accepted`
          : `${id} settles only to: ${result.settlementAccounts.join(', ')}`
      )
    })
  }
}
