import { BaseCommand, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/**
 * Lists the deposit-account pool; --usage adds what each account uses now
 * beside its limits (Bangkok hour and day), its fullest transfer_amount
 * slots and the end of a maintenance window it is in.
 */
export default class DepositAccountList extends BaseCommand {
  static commandName = 'deposit-account:list'
  static description = 'List deposit accounts, best first within each group'
  static options: CommandOptions = { startApp: true }

  @flags.string({ description: 'Only this deposit group' })
  declare group?: string

  @flags.boolean({ description: 'Show usage: this hour, today, slots, maintenance' })
  declare usage?: boolean

  @flags.boolean({ description: 'Print a JSON array' })
  declare json?: boolean

  async run() {
    const { listDepositAccounts, depositAccountUsage, describeUsage, presentUsage } =
      await import('#payments/deposit_account_usage')
    const { describeLimits, describeTarget, presentDepositAccount } =
      await import('#payments/deposit_account_snapshot')
    const accounts = await listDepositAccounts({ group: this.group })
    const usage = this.usage ? await depositAccountUsage(accounts) : null
    if (this.json) {
      const rows = accounts.map((account) => ({
        ...presentDepositAccount(account),
        ...(usage ? { usage: presentUsage(usage.get(account.id)!) } : {}),
      }))
      console.log(JSON.stringify(rows))
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
      ...(usage ? ['usage'] : []),
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
        ...(usage ? [describeUsage(usage.get(account.id)!)] : []),
      ])
    }
    table.render()
  }
}
