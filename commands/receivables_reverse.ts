import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/** Ace adapter of the reverse-receivable action (the back-office uses the same one). */
export default class ReceivablesReverse extends BaseCommand {
  static commandName = 'receivables:reverse'
  static description =
    'Take back the credit of a payment marked paid whose bank line never came (the order is frozen)'
  static options: CommandOptions = { startApp: true }

  @args.string({ description: 'platform_order_id of the payment' })
  declare platformOrderId: string

  @flags.string({
    description: 'Reason code (no_money_received, forged_slip, transfer_recalled, other)',
  })
  declare reason?: string

  @flags.string({ description: 'Why, in words (kept in the audit log and on the timeline)' })
  declare comment?: string

  async run() {
    const { reverseReceivable } = await import('#reconciliation/actions/reverse_receivable')
    const { runAction } = await import('#core/cli')
    const { cliActor } = await import('#core/actor')
    const { formatAmount } = await import('#core/money')
    await runAction(this, async () => {
      const result = await reverseReceivable(
        {
          platform_order_id: this.platformOrderId,
          reason_code: this.reason,
          comment: this.comment,
        },
        cliActor()
      )
      this.logger.success(
        `${result.order.platformOrderId}: ${formatAmount(result.reversed)} THB taken back from the merchant (fee ${formatAmount(result.fee)}), the order is ${result.order.status}`
      )
    })
  }
}
