import { BaseCommand, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/** Ace adapter of the create-merchant action (the back-office uses the same one). */
export default class MerchantCreate extends BaseCommand {
  static commandName = 'merchant:create'
  static description = 'Create a merchant and print its merchant_id, token and secret (shown once)'
  static options: CommandOptions = { startApp: true }

  @flags.string({ description: 'Code of the platform the merchant belongs to', required: true })
  declare platform: string

  @flags.string({ description: 'Merchant display name', required: true })
  declare name: string

  @flags.string({ description: '3-character platform_order_id prefix (default: random, unique)' })
  declare prefix?: string

  @flags.string({ description: 'merchant_id to use (default: generated); must end with a digit' })
  declare merchantId?: string

  @flags.boolean({ description: 'Print the credentials as one JSON object, for scripts' })
  declare json?: boolean

  async run() {
    const { createMerchant } = await import('#merchants/actions/create_merchant')
    const { runAction } = await import('#core/cli')
    const { cliActor } = await import('#core/actor')
    await runAction(this, async () => {
      const { merchant, platform, credentials } = await createMerchant(
        {
          platform: this.platform,
          name: this.name,
          order_prefix: this.prefix,
          merchant_id: this.merchantId,
        },
        cliActor()
      )
      const output = {
        merchant_id: merchant.merchantId,
        token: credentials.token,
        secret: credentials.secret,
        order_prefix: merchant.orderPrefix,
        platform: platform.code,
      }
      if (this.json) {
        console.log(JSON.stringify(output))
        return
      }
      this.logger.success(`Merchant ${merchant.name} created`)
      const table = this.ui.table()
      table.head(['field', 'value'])
      for (const [key, value] of Object.entries(output)) table.row([key, value])
      table.render()
      this.logger.warning(
        "The token and secret are shown only now. Store them in the merchant's secret manager."
      )
    })
  }
}
