import { BaseCommand, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

export default class DepositAccountList extends BaseCommand {
  static commandName = 'deposit-account:list'
  static description = 'List deposit accounts, best first within each group'
  static options: CommandOptions = { startApp: true }

  @flags.string({ description: 'Only this deposit group' })
  declare group?: string

  @flags.boolean({ description: 'Print a JSON array' })
  declare json?: boolean

  async run() {
    const { listDepositAccounts, presentDepositAccount, describeLimits, describeTarget } =
      await import('#services/deposit_accounts')
    const accounts = await listDepositAccounts(this.group)
    if (this.json) {
      console.log(JSON.stringify(accounts.map((account) => presentDepositAccount(account))))
      return
    }
    if (accounts.length === 0) {
      this.logger.info(
        this.group ? `No deposit accounts in group ${this.group}` : 'No deposit accounts'
      )
      return
    }
    const table = this.ui.table()
    table.head([
      'id',
      'group',
      'channel',
      'bank',
      'account_no',
      'name',
      'via',
      'limits',
      'priority',
      'active',
    ])
    for (const account of accounts) {
      table.row([
        String(account.id),
        account.depositGroup,
        account.channel,
        account.bank,
        account.accountNo,
        account.accountName,
        describeTarget(account),
        describeLimits(account),
        String(account.priority),
        account.active ? 'yes' : 'no',
      ])
    }
    table.render()
  }
}
