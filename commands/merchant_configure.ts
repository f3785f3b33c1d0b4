import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/**
 * Ace adapter of the configure-merchant action: changes the settings given
 * and prints all of them, with warnings about settings that make calls fail.
 * With no option it just prints. --no-deposit-group and the like clear.
 * Numbers are read as text so that the action, not Ace, judges them.
 * Everything applies at once; a change that waits for a second admin in the
 * back-office (a payout route, a fee, a wider limit, a permission on, an
 * activation) is recorded as a break-glass use and notified to every admin.
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

  @flags.string({ description: 'Seconds a payment order stays open (60-86400, default 900)' })
  declare orderTtl?: string

  @flags.string({ description: 'slip_upload_wait_seconds (slip uploads), 0-86400' })
  declare slipUploadWait?: string

  @flags.string({ description: 'Payment fee in basis points (100 = 1 %)' })
  declare paymentFeeRate?: string

  @flags.string({ description: 'Withdraw fee rate in basis points' })
  declare withdrawFeeRate?: string

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

  @flags.string({
    description:
      'Merchant API requests per second for this merchant; --no-api-rate-limit: the gateway default',
    allowEmptyValue: true,
  })
  declare apiRateLimit?: string

  @flags.string({ description: 'Why (kept in the audit log)' })
  declare comment?: string

  @flags.boolean({ description: 'Print the settings as one JSON object' })
  declare json?: boolean

  async run() {
    const { configureMerchant } = await import('#merchants/actions/configure_merchant')
    const { merchantOverview } = await import('#merchants/merchant_rules')
    const { default: gateway } = await import('#config/gateway')
    const { runAction } = await import('#core/cli')
    const { cliActor } = await import('#core/actor')
    // --no-<option> arrives as false: clear the setting.
    const clearable = (value: unknown) => (value === false ? 'none' : value)
    await runAction(this, async () => {
      const { merchant, changed, warnings } = await configureMerchant(
        {
          merchant_id: this.merchantId,
          status: this.status,
          deposit_group: clearable(this.depositGroup),
          payout_route: clearable(this.payoutRoute),
          payment_enabled: this.payments,
          withdraw_enabled: this.withdrawals,
          settlement_enabled: this.settlements,
          order_ttl_seconds: this.orderTtl,
          slip_upload_wait_seconds: this.slipUploadWait,
          payment_fee_rate_bps: this.paymentFeeRate,
          withdraw_fee_rate_bps: this.withdrawFeeRate,
          withdraw_fee_flat: this.withdrawFee,
          settlement_fee_flat: this.settlementFee,
          withdraw_min: this.withdrawMin,
          withdraw_max: clearable(this.withdrawMax),
          settlement_min: this.settlementMin,
          settlement_max: this.settlementMax,
          withdraw_duplicate_check: this.withdrawDuplicateCheck,
          api_rate_limit: clearable(this.apiRateLimit),
          comment: this.comment,
        },
        cliActor()
      )
      const settings = await merchantOverview(merchant)
      if (this.json) {
        console.log(JSON.stringify({ ...settings, changed, warnings }))
        return
      }
      if (changed.length > 0) {
        this.logger.success(`Merchant ${merchant.merchantId} updated: ${changed.join(', ')}`)
      }
      const table = this.ui.table()
      table.head(['setting', 'value'])
      for (const [key, value] of Object.entries(settings)) {
        const shown =
          typeof value === 'boolean'
            ? value
              ? 'on'
              : 'off'
            : key === 'api_rate_limit' && value === null
              ? `default (${gateway.rateLimits.perMerchant})`
              : String(value ?? '-')
        table.row([key, shown])
      }
      table.render()
      for (const warning of warnings) this.logger.warning(warning)
    })
  }
}
