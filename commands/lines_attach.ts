import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/** Ace adapter of the attach-statement-line action (the back-office uses the same one). */
export default class LinesAttach extends BaseCommand {
  static commandName = 'lines:attach'
  static description =
    'Attach an unmatched or late statement line to the payment order it pays (an expired order: the merchant is credited)'
  static options: CommandOptions = { startApp: true }

  @args.string({ description: 'Statement line id' })
  declare line: string

  @args.string({ description: 'platform_order_id of the payment (marker P)' })
  declare platformOrderId: string

  @flags.string({ description: 'Reason code (late_payment, reference_in_description, ...)' })
  declare reason?: string

  @flags.string({ description: 'Why, in words (kept on the line and in the audit log)' })
  declare comment?: string

  async run() {
    const { attachStatementLine } = await import('#reconciliation/actions/attach_statement_line')
    const { runAction } = await import('#core/cli')
    const { cliActor } = await import('#core/actor')
    const { formatAmount } = await import('#core/money')
    await runAction(this, async () => {
      const result = await attachStatementLine(
        {
          statement_line_id: this.line,
          platform_order_id: this.platformOrderId,
          reason_code: this.reason,
          comment: this.comment,
        },
        cliActor()
      )
      if (result.outcome === 'approval_requested') {
        this.logger.warning(
          `line #${result.lineId}: approval request #${result.request.id} opened; a second operator must approve it`
        )
      } else if (result.outcome === 'paid') {
        this.logger.success(`line #${result.lineId} paid ${result.order.platformOrderId}`)
      } else {
        this.logger.success(
          `line #${result.lineId}: late payment of ${result.order.platformOrderId}: ` +
            `${formatAmount(result.credited ?? 0)} THB credited to the merchant (fee ${formatAmount(result.fee ?? 0)})`
        )
      }
    })
  }
}
