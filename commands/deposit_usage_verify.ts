import { BaseCommand, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

export default class DepositUsageVerify extends BaseCommand {
  static commandName = 'deposit-usage:verify'
  static description =
    "Recount today's deposit limit counters and the held transfer_amount slots from the orders; exits 1 on any drift"
  static options: CommandOptions = { startApp: true }

  @flags.boolean({ description: 'Rewrite what differs to the recount from the orders' })
  declare fix?: boolean

  @flags.boolean({ description: 'Print the result as one JSON object' })
  declare json?: boolean

  async run() {
    const { verifyDepositUsage } = await import('#payments/deposit_usage_counters')
    const result = await verifyDepositUsage({ fix: this.fix })
    if (this.json) {
      console.log(JSON.stringify({ ok: result.drifts.length === 0, ...result }))
    } else if (result.drifts.length === 0) {
      this.logger.success(
        `Deposit usage matches the orders: ${result.counters} counters today, ${result.slots} slots held, no drift`
      )
    } else {
      this.logger.error(`Deposit usage drift found (${result.drifts.length}):`)
      for (const drift of result.drifts) this.logger.error(`  ${drift.kind}: ${drift.detail}`)
      if (result.fixed) this.logger.info('Fixed: counters and slots now follow the orders')
    }
    // A fix still exits 1: the drift was there and someone should find out why.
    if (result.drifts.length > 0) this.exitCode = 1
  }
}
