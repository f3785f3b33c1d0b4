import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'
import { runMerchantListEdit } from './_merchant_list_edit.js'

/**
 * Ace adapter of the edit-IP-whitelist action; with no flag it only lists.
 * Every change applies at once; one that lets more sources call (an address
 * added to a list, the last one removed), which waits for a second admin in
 * the back-office, is recorded as a break-glass use and notified to every
 * admin.
 */
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

  @flags.string({ description: 'Why (kept in the audit log)' })
  declare comment?: string

  async run() {
    const { editIpWhitelist } = await import('#merchants/actions/edit_ip_whitelist')
    await runMerchantListEdit(this, editIpWhitelist, (result) => {
      for (const cidr of result.added) this.logger.info(`added ${cidr}`)
      for (const cidr of result.alreadyListed) this.logger.info(`${cidr} was already listed`)
      for (const cidr of result.removed) this.logger.info(`removed ${cidr}`)
      for (const cidr of result.notListed) this.logger.info(`${cidr} was not listed`)
      const id = result.merchant.merchantId
      console.log(
        result.whitelist.length === 0
          ? `${id}: no whitelist, every source IP is accepted`
          : `${id} accepts calls from: ${result.whitelist.join(', ')}`
      )
    })
  }
}
