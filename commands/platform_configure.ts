import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'
import { cliActor } from '#services/audit'

/**
 * Changes a platform's settings and prints them. Hours are Bangkok time
 * (GMT+7); a window such as 22:00-06:00 spans midnight.
 * --no-payment-page-domain reaches the service as `false`: "clear".
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

  @flags.boolean({ description: 'Print the settings as one JSON object' })
  declare json?: boolean

  async run() {
    const { configurePlatform, platformSettings, OperatorInputError } =
      await import('#services/merchant_settings')
    try {
      const { platform, changed } = await configurePlatform(
        this.code,
        {
          name: this.name,
          paymentPageDomain: this.paymentPageDomain,
          deposits: this.deposits,
          depositHours: this.depositHours,
          settlementHours: this.settlementHours,
        },
        cliActor()
      )
      const settings = platformSettings(platform)
      if (this.json) {
        console.log(JSON.stringify({ ...settings, changed }))
        return
      }
      if (changed.length > 0) {
        this.logger.success(`Platform ${platform.code} updated: ${changed.join(', ')}`)
      }
      const table = this.ui.table()
      table.head(['setting', 'value'])
      for (const [key, value] of Object.entries(settings)) table.row([key, String(value ?? '-')])
      table.render()
    } catch (error) {
      if (!(error instanceof OperatorInputError)) throw error
      for (const line of error.message.split('\n')) this.logger.error(line)
      this.exitCode = 1
    }
  }
}
