import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/** Ace adapter of the record-payout-outcome action (the back-office uses the same one). */
export default class PayoutsComplete extends BaseCommand {
  static commandName = 'payouts:complete'
  static description =
    "Record the bank's final answer for a withdrawal or settlement (e.g. from a bulk-transfer report); --fail is a break-glass use"
  static options: CommandOptions = { startApp: true }

  @args.string({ description: 'platform_order_id (marker W or M)' })
  declare platformOrderId: string

  @flags.boolean({ description: 'The bank made the transfer' })
  declare success?: boolean

  @flags.string({
    description: 'The bank refused or returned the transfer, with this reason',
    allowEmptyValue: true,
  })
  declare fail?: string

  async run() {
    const { recordPayoutOutcome } = await import('#payouts/actions/record_payout_outcome')
    const { runAction } = await import('#core/cli')
    const { cliActor } = await import('#core/actor')
    await runAction(this, async () => {
      const { order } = await recordPayoutOutcome(
        {
          platform_order_id: this.platformOrderId,
          // Both flags: a success with a reason, which the action refuses.
          outcome: this.success ? 'success' : this.fail !== undefined ? 'failed' : undefined,
          reason: this.fail,
        },
        cliActor()
      )
      this.logger.success(
        `${order.platformOrderId}: ${order.status === 'success' ? 'success' : `failed (${order.failureReason})`}`
      )
    })
  }
}
