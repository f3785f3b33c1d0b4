import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

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

  async run() {
    const { default: Merchant } = await import('#models/merchant')
    const { addSettlementAccount, removeSettlementAccount, settlementAccounts } =
      await import('#payouts/settlement_accounts')
    const { cliActor } = await import('#services/audit')
    const merchant = await Merchant.findBy('merchant_id', this.merchantId)
    if (!merchant) {
      this.logger.error(`No merchant with merchant_id ${this.merchantId}`)
      this.exitCode = 1
      return
    }
    try {
      for (const entry of this.add ?? []) await addSettlementAccount(merchant, entry, cliActor())
      for (const entry of this.remove ?? [])
        await removeSettlementAccount(merchant, entry, cliActor())
    } catch (error) {
      this.logger.error((error as Error).message)
      this.exitCode = 1
      return
    }
    const list = await settlementAccounts(merchant)
    console.log(
      list.length === 0
        ? `${merchant.merchantId}: no registered settlement accounts, any destination is accepted`
        : `${merchant.merchantId} settles only to: ${list.map((row) => `${row.bank}:${row.account_no}`).join(', ')}`
    )
  }
}
