import { BaseCommand, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/**
 * Ace adapter of the create-deposit-account action (the back-office uses the
 * same one): flags become the action's fields, its refusals are printed.
 * From the server the account is added at once (in the back-office it waits
 * for a second admin) and the use is recorded as break-glass: an audit row
 * and a notice to every admin.
 */
export default class DepositAccountCreate extends BaseCommand {
  static commandName = 'deposit-account:create'
  static description =
    'Add a deposit account (bank account, PromptPay QR or external provider) to a deposit group'
  static options: CommandOptions = { startApp: true }

  @flags.string({ description: 'Deposit group; merchants draw from their group', required: true })
  declare group: string

  @flags.string({ description: 'qr, transfer or external', required: true })
  declare channel: string

  @flags.string({ description: 'Bank code, e.g. KBANK, SCB', required: true })
  declare bank: string

  @flags.string({ description: 'Account number, 10-15 digits', required: true })
  declare accountNo: string

  @flags.string({ description: 'Account holder name shown to customers', required: true })
  declare accountName: string

  @flags.string({
    description: 'qr: PromptPay mobile number, 13-digit national/tax id or 15-digit e-wallet id',
  })
  declare promptpayId?: string

  @flags.string({ description: 'qr: 15-digit biller id (bill-payment QR with a per-order ref1)' })
  declare billerId?: string

  @flags.string({ description: 'external: provider adapter name, e.g. sandbox' })
  declare provider?: string

  @flags.string({ description: 'external: provider settings as a JSON object' })
  declare providerConfig?: string

  @flags.string({ description: 'Smallest order amount in THB (default 20.00)' })
  declare min?: string

  @flags.string({ description: 'Largest order amount in THB (default: unlimited)' })
  declare max?: string

  @flags.string({ description: 'Orders per hour (default: unlimited)' })
  declare hourlyCount?: string

  @flags.string({ description: 'THB per hour (default: unlimited)' })
  declare hourlyAmount?: string

  @flags.string({ description: 'Orders per day, Bangkok calendar day (default: unlimited)' })
  declare dailyCount?: string

  @flags.string({ description: 'THB per day, Bangkok calendar day (default: unlimited)' })
  declare dailyAmount?: string

  @flags.number({
    description: 'Largest satang adjustment that makes a transfer_amount unique (default 999)',
  })
  declare maxAdjustment?: number

  @flags.number({ description: 'Higher is tried first (default 0)' })
  declare priority?: number

  @flags.boolean({ description: 'Create the account switched off' })
  declare inactive?: boolean

  @flags.string({ description: 'Why (kept in the audit log)' })
  declare comment?: string

  @flags.boolean({ description: 'Print the account as one JSON object' })
  declare json?: boolean

  async run() {
    const { createDepositAccount } = await import('#payments/actions/create_deposit_account')
    const { depositAccountInputFromOptions } = await import('#payments/deposit_account_input')
    const { describeLimits, describeTarget, presentDepositAccount } =
      await import('#payments/deposit_account_snapshot')
    const { runAction } = await import('#core/cli')
    const { cliActor } = await import('#core/actor')
    await runAction(this, async () => {
      const { account, request } = await createDepositAccount(
        { ...depositAccountInputFromOptions(this), active: this.inactive ? false : undefined },
        cliActor()
      )
      // From the shell it is never a request; kept exhaustive for the types.
      if (!account) throw new Error(`approval request #${request.id} opened`)
      if (this.json) {
        console.log(JSON.stringify(presentDepositAccount(account)))
        return
      }
      this.logger.success(
        `Deposit account ${account.id} created in group ${account.depositGroup}: ` +
          `${account.channel} ${account.bank} ${account.accountNo} (${describeTarget(account)}), ` +
          `limits ${describeLimits(account)}, priority ${account.priority}` +
          (account.active ? '' : ', inactive')
      )
      console.log(`id: ${account.id}`)
      this.logger.warning(
        'Recorded as a break-glass use (added from the server, without a second admin): every admin is notified'
      )
    })
  }
}
