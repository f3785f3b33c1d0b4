import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'
import { cliActor } from '#services/audit'

/**
 * Changes a merchant's settings and prints all of them. Only the options
 * given change; with none it just prints. --no-deposit-group and the like
 * reach the service as `false` (the flags allow an empty value): "clear".
 */
export default class MerchantConfigure extends BaseCommand {
  static commandName = 'merchant:configure'
  static description =
    "Show or change a merchant's settings: deposit group, permissions, order TTL, fees, limits, status"
  static options: CommandOptions = { startApp: true }

  @args.string({ description: 'merchant_id' })
  declare merchantId: string

  @flags.string({ description: 'active or suspended (suspended: every API call is refused)' })
  declare status?: string

  @flags.string({
    description: 'Deposit group the payments draw from; --no-deposit-group removes it',
    allowEmptyValue: true,
  })
  declare depositGroup?: string

  @flags.string({
    description: 'Payout route; --no-payout-route removes it',
    allowEmptyValue: true,
  })
  declare payoutRoute?: string

  @flags.string({ description: 'Payment create endpoints: on or off' })
  declare payments?: string

  @flags.string({ description: 'Withdrawals: on or off' })
  declare withdrawals?: string

  @flags.string({ description: 'Settlements: on or off' })
  declare settlements?: string

  @flags.number({ description: 'Seconds a payment order stays open (60-86400, default 900)' })
  declare orderTtl?: number

  @flags.number({ description: 'slip_upload_wait_seconds (slip uploads), 0-86400' })
  declare slipUploadWait?: number

  @flags.number({ description: 'Payment fee in basis points (100 = 1 %)' })
  declare paymentFeeRate?: number

  @flags.number({ description: 'Withdraw fee rate in basis points' })
  declare withdrawFeeRate?: number

  @flags.string({ description: 'Flat withdraw fee in THB' })
  declare withdrawFee?: string

  @flags.string({ description: 'Flat settlement fee in THB' })
  declare settlementFee?: string

  @flags.string({ description: 'Smallest withdraw in THB' })
  declare withdrawMin?: string

  @flags.string({
    description: 'Largest withdraw in THB; --no-withdraw-max: unlimited',
    allowEmptyValue: true,
  })
  declare withdrawMax?: string

  @flags.string({ description: 'Smallest settlement in THB' })
  declare settlementMin?: string

  @flags.string({ description: 'Largest settlement in THB' })
  declare settlementMax?: string

  @flags.string({ description: 'Refuse repeated withdrawals to one account: on or off' })
  declare withdrawDuplicateCheck?: string

  @flags.boolean({ description: 'Print the settings as one JSON object' })
  declare json?: boolean

  async run() {
    const { configureMerchant, merchantSettings, OperatorInputError } =
      await import('#services/merchant_settings')
    try {
      const { merchant, changed, warnings } = await configureMerchant(
        this.merchantId,
        {
          status: this.status,
          depositGroup: this.depositGroup,
          payoutRoute: this.payoutRoute,
          payments: this.payments,
          withdrawals: this.withdrawals,
          settlements: this.settlements,
          orderTtl: this.orderTtl,
          slipUploadWait: this.slipUploadWait,
          paymentFeeRate: this.paymentFeeRate,
          withdrawFeeRate: this.withdrawFeeRate,
          withdrawFee: this.withdrawFee,
          settlementFee: this.settlementFee,
          withdrawMin: this.withdrawMin,
          withdrawMax: this.withdrawMax,
          settlementMin: this.settlementMin,
          settlementMax: this.settlementMax,
          withdrawDuplicateCheck: this.withdrawDuplicateCheck,
        },
        cliActor()
      )
      const settings = await merchantSettings(merchant)
      if (this.json) {
        console.log(JSON.stringify({ ...settings, changed, warnings }))
        return
      }
      if (changed.length > 0) {
        this.logger.success(`Merchant ${merchant.merchantId} updated: ${changed.join(', ')}`)
      }
      const table = this.ui.table()
      table.head(['setting', 'value'])
      for (const [key, value] of Object.entries(settings)) table.row([key, String(value ?? '-')])
      table.render()
      for (const warning of warnings) this.logger.warning(warning)
    } catch (error) {
      if (!(error instanceof OperatorInputError)) throw error
      for (const line of error.message.split('\n')) this.logger.error(line)
      this.exitCode = 1
    }
  }
}
