import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/**
 * Ace adapter of the update-deposit-account action. Only the options given
 * change; --no-<option> (or the value "none") clears an optional one: a limit
 * becomes unlimited. Ace hands such flags over as `false` (they allow an
 * empty value), which the action reads as "clear". From the server the
 * whole change applies at once; a change beyond a stop (deactivating,
 * lowering a limit), which the back-office sends to a second admin, is
 * recorded as a break-glass use and notified to every admin.
 */
export default class DepositAccountUpdate extends BaseCommand {
  static commandName = 'deposit-account:update'
  static description =
    'Change a deposit account; --no-max, --no-hourly-count … (or "none") make a limit unlimited'
  static options: CommandOptions = { startApp: true }

  @args.string({ description: 'Deposit account id (see deposit-account:list)' })
  declare id: string

  @flags.string({ description: 'Deposit group' })
  declare group?: string

  @flags.string({ description: 'qr, transfer or external' })
  declare channel?: string

  @flags.string({ description: 'Bank code, e.g. KBANK' })
  declare bank?: string

  @flags.string({ description: 'Account number, 10-15 digits' })
  declare accountNo?: string

  @flags.string({ description: 'Account holder name' })
  declare accountName?: string

  @flags.string({
    description: 'qr: PromptPay id (replaces a biller id)',
    allowEmptyValue: true,
  })
  declare promptpayId?: string

  @flags.string({
    description: 'qr: 15-digit biller id (replaces a PromptPay id)',
    allowEmptyValue: true,
  })
  declare billerId?: string

  @flags.string({ description: 'external: provider adapter name', allowEmptyValue: true })
  declare provider?: string

  @flags.string({
    description: 'external: provider settings as a JSON object',
    allowEmptyValue: true,
  })
  declare providerConfig?: string

  @flags.string({ description: 'Smallest order amount in THB' })
  declare min?: string

  @flags.string({ description: 'Largest order amount in THB', allowEmptyValue: true })
  declare max?: string

  @flags.string({ description: 'Orders per hour', allowEmptyValue: true })
  declare hourlyCount?: string

  @flags.string({ description: 'THB per hour', allowEmptyValue: true })
  declare hourlyAmount?: string

  @flags.string({ description: 'Orders per day (Bangkok calendar day)', allowEmptyValue: true })
  declare dailyCount?: string

  @flags.string({ description: 'THB per day (Bangkok calendar day)', allowEmptyValue: true })
  declare dailyAmount?: string

  @flags.number({ description: 'Largest satang adjustment of a transfer_amount' })
  declare maxAdjustment?: number

  @flags.number({ description: 'Higher is tried first' })
  declare priority?: number

  @flags.boolean({ description: 'Switch the account on' })
  declare active?: boolean

  @flags.boolean({ description: 'Switch the account off (open orders on it stay valid)' })
  declare inactive?: boolean

  @flags.string({ description: 'Why (kept in the audit log)' })
  declare comment?: string

  @flags.boolean({ description: 'Print the account as one JSON object' })
  declare json?: boolean

  async run() {
    const { updateDepositAccount } = await import('#payments/actions/update_deposit_account')
    const { depositAccountInputFromOptions } = await import('#payments/deposit_account_input')
    const { describeLimits, describeTarget, presentDepositAccount } =
      await import('#payments/deposit_account_snapshot')
    const { runAction } = await import('#core/cli')
    const { cliActor } = await import('#core/actor')
    if (this.active && this.inactive) {
      this.logger.error('Give --active or --inactive, not both')
      this.exitCode = 1
      return
    }
    await runAction(this, async () => {
      const { account, changed, breakGlass } = await updateDepositAccount(
        {
          id: this.id,
          ...depositAccountInputFromOptions(this),
          active: this.inactive ? false : this.active,
        },
        cliActor()
      )
      if (this.json) {
        console.log(JSON.stringify({ ...presentDepositAccount(account), changed }))
        return
      }
      if (changed.length === 0) this.logger.info(`Deposit account ${account.id}: nothing changed`)
      else this.logger.success(`Deposit account ${account.id} updated: ${changed.join(', ')}`)
      console.log(
        `${account.id} ${account.depositGroup} ${account.channel} ${account.bank} ${account.accountNo} ` +
          `(${describeTarget(account)}) limits ${describeLimits(account)} priority ${account.priority} ` +
          (account.active ? 'active' : 'inactive')
      )
      if (breakGlass) {
        this.logger.warning(
          'Recorded as a break-glass use (changed from the server, without a second admin): every admin is notified'
        )
      }
    })
  }
}
