import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

export default class PayoutsComplete extends BaseCommand {
  static commandName = 'payouts:complete'
  static description =
    "Record the bank's final answer for a withdrawal or settlement (e.g. from a bulk-transfer report)"
  static options: CommandOptions = { startApp: true }

  @args.string({ description: 'platform_order_id (marker W or M)' })
  declare platformOrderId: string

  @flags.boolean({ description: 'The bank made the transfer' })
  declare success?: boolean

  @flags.string({ description: 'The bank refused or returned the transfer, with this reason' })
  declare fail?: string

  async run() {
    const { default: PayoutOrder } = await import('#models/payout_order')
    const { completePayout } = await import('#payouts/complete_payout')
    const { recordAudit, cliActor } = await import('#services/audit')

    if (!!this.success === !!this.fail) {
      this.logger.error('Give exactly one of --success or --fail <reason>')
      this.exitCode = 1
      return
    }
    const order = await PayoutOrder.findBy('platform_order_id', this.platformOrderId)
    if (!order) {
      this.logger.error(`No withdrawal or settlement ${this.platformOrderId}`)
      this.exitCode = 1
      return
    }
    if (order.status !== 'pending') {
      this.logger.error(
        `${order.platformOrderId} is ${order.status}; only a pending payout can be completed`
      )
      this.exitCode = 1
      return
    }
    const done = await completePayout(
      order.id,
      this.success ? { success: true } : { success: false, reason: this.fail!.slice(0, 64) }
    )
    if (!done) {
      this.logger.error(`${order.platformOrderId} was completed by someone else in the meantime`)
      this.exitCode = 1
      return
    }
    await recordAudit({
      actor: cliActor(),
      action: 'payout.complete',
      subjectType: order.kind,
      subjectId: order.platformOrderId,
      details: this.success ? { outcome: 'success' } : { outcome: 'failed', reason: this.fail },
    })
    this.logger.success(
      `${order.platformOrderId}: ${this.success ? 'success' : `failed (${this.fail})`}`
    )
  }
}
