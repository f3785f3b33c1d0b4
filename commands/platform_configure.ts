import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/**
 * Ace adapter of the configure-platform action: changes the settings given
 * and prints them all. Hours are Bangkok time (GMT+7); a window such as
 * 22:00-06:00 spans midnight. --no-payment-page-domain clears the domain.
 * From the command line, switching deposits back on, raising or removing
 * the four-eyes threshold and setting a new payment page domain apply at
 * once (in the back-office they need a second admin's approval); the audit
 * row records that they were made here, a new payment page domain is also a
 * break-glass use notified to every admin, and a pending back-office request
 * for the same change is closed as superseded.
 */
export default class PlatformConfigure extends BaseCommand {
  static commandName = 'platform:configure'
  static description =
    "Show or change a platform's payment page domain, deposit killswitch and open hours"
  static options: CommandOptions = { startApp: true }

  @args.string({ description: 'Platform code' })
  declare code: string

  @flags.string({ description: 'Display name' })
  declare name?: string

  @flags.string({
    description: 'Host of the hosted payment page; --no-payment-page-domain removes it',
    allowEmptyValue: true,
  })
  declare paymentPageDomain?: string

  @flags.string({
    description: 'Deposit API killswitch: on or off (off: payment create answers 503)',
  })
  declare deposits?: string

  @flags.string({ description: 'Deposit hours HH:mm-HH:mm (Bangkok time) or always' })
  declare depositHours?: string

  @flags.string({ description: 'Settlement hours HH:mm-HH:mm (Bangkok time) or always' })
  declare settlementHours?: string

  @flags.string({
    description: 'THB above which marking a payment paid needs a second operator, or none (never)',
  })
  declare fourEyesThreshold?: string

  @flags.string({ description: 'Why (kept in the audit log)' })
  declare comment?: string

  @flags.boolean({ description: 'Print the settings as one JSON object' })
  declare json?: boolean

  async run() {
    const { configurePlatform } = await import('#merchants/actions/configure_platform')
    const { platformSnapshot } = await import('#merchants/platform_rules')
    const { runAction } = await import('#core/cli')
    const { cliActor } = await import('#core/actor')
    await runAction(this, async () => {
      const { platform, changed, superseded } = await configurePlatform(
        {
          code: this.code,
          name: this.name,
          // --no-payment-page-domain arrives as false: clear it.
          payment_page_domain:
            (this.paymentPageDomain as unknown) === false ? 'none' : this.paymentPageDomain,
          deposit_enabled: this.deposits,
          deposit_hours: this.depositHours,
          settlement_hours: this.settlementHours,
          four_eyes_threshold: this.fourEyesThreshold,
          comment: this.comment,
        },
        cliActor()
      )
      const settings = platformSnapshot(platform)
      const closed = superseded.map((request) => request.id)
      if (this.json) {
        console.log(JSON.stringify({ ...settings, changed, superseded_requests: closed }))
        return
      }
      if (changed.length > 0) {
        this.logger.success(`Platform ${platform.code} updated: ${changed.join(', ')}`)
      }
      for (const request of superseded) {
        this.logger.info(
          `Approval request #${request.id} (${request.kind}, asked by ${request.requestedByActor}) closed: superseded`
        )
      }
      const table = this.ui.table()
      table.head(['setting', 'value'])
      for (const [key, value] of Object.entries(settings)) table.row([key, String(value ?? '-')])
      table.render()
    })
  }
}
