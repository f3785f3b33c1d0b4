import { BaseCommand, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/** Ace adapter of the settle-payments action: what the job does, once, audited. */
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
    const { settlePayments } = await import('#payments/actions/settle_payment')
    const { runAction } = await import('#core/cli')
    const { cliActor } = await import('#core/actor')
    await runAction(this, async () => {
      const { settled } = await settlePayments({ now: !!this.now }, cliActor())
      this.logger.success(`Settled ${settled} payment order(s)`)
    })
  }
}
