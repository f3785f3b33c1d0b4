import { BaseCommand, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

export default class SettleRun extends BaseCommand {
  static commandName = 'settle:run'
  static description =
    'Move paid deposits that are due from unsettle_balance to balance (settled_paid)'
  static options: CommandOptions = { startApp: true }

  @flags.boolean({
    description: 'Settle every unsettled_paid order now, whatever the settlement delay',
  })
  declare now?: boolean

  async run() {
    const { settleDuePayments } = await import('#reconciliation/settle_payments')
    const { recordAudit, cliActor } = await import('#services/audit')
    const settled = await settleDuePayments({ ignoreDelay: !!this.now })
    if (settled > 0) {
      await recordAudit({
        actor: cliActor(),
        action: 'payments.settle_run',
        details: { settled, now: !!this.now },
      })
    }
    this.logger.success(`Settled ${settled} payment order(s)`)
  }
}
