import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'
import { cliActor } from '#services/audit'

export default class MerchantIpWhitelist extends BaseCommand {
  static commandName = 'merchant:ip-whitelist'
  static description =
    'List, add or remove the source IPs (or CIDR blocks) a merchant may call from'
  static options: CommandOptions = { startApp: true }

  @args.string({ description: 'merchant_id' })
  declare merchantId: string

  @flags.array({ description: 'Address or CIDR block to allow (repeatable)' })
  declare add?: string[]

  @flags.array({ description: 'Address or CIDR block to remove (repeatable)' })
  declare remove?: string[]

  async run() {
    const { default: Merchant } = await import('#models/merchant')
    const { addToWhitelist, removeFromWhitelist, whitelistFor } =
      await import('#services/ip_whitelist')

    const merchant = await Merchant.findBy('merchant_id', this.merchantId)
    if (!merchant) {
      this.logger.error(`No merchant with merchant_id ${this.merchantId}`)
      this.exitCode = 1
      return
    }
    try {
      for (const entry of this.add ?? []) {
        const result = await addToWhitelist(merchant, entry, cliActor())
        this.logger.info(
          result.changed ? `added ${result.cidr}` : `${result.cidr} was already listed`
        )
      }
      for (const entry of this.remove ?? []) {
        const result = await removeFromWhitelist(merchant, entry, cliActor())
        this.logger.info(
          result.changed ? `removed ${result.cidr}` : `${result.cidr} was not listed`
        )
      }
    } catch (error) {
      this.logger.error((error as Error).message)
      this.exitCode = 1
      return
    }
    const list = await whitelistFor(merchant.id)
    console.log(
      list.length === 0
        ? `${merchant.merchantId}: no whitelist, every source IP is accepted`
        : `${merchant.merchantId} accepts calls from: ${list.join(', ')}`
    )
  }
}
