import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/** Ace adapter of the credit-merchant-from-line action (the back-office uses the same one). */
export default class LinesCredit extends BaseCommand {
  static commandName = 'lines:credit'
  static description =
    "Credit an unmatched statement line to a merchant's available balance (less its payment fee)"
  static options: CommandOptions = { startApp: true }

  @args.string({ description: 'Statement line id' })
  declare line: string

  @args.string({ description: 'merchant_id of the merchant credited' })
  declare merchantId: string

  @flags.string({ description: 'Reason code (merchant_claimed, wrong_amount, ...)' })
  declare reason?: string

  @flags.string({ description: 'Why, in words (kept on the line and in the audit log)' })
  declare comment?: string

  async run() {
    const { creditMerchantFromLine } =
      await import('#reconciliation/actions/credit_merchant_from_line')
    const { runAction } = await import('#core/cli')
    const { cliActor } = await import('#core/actor')
    const { formatAmount } = await import('#core/money')
    await runAction(this, async () => {
      const result = await creditMerchantFromLine(
        {
          statement_line_id: this.line,
          merchant_id: this.merchantId,
          reason_code: this.reason,
          comment: this.comment,
        },
        cliActor()
      )
      if (result.outcome === 'approval_requested') {
        this.logger.warning(
          `line #${result.lineId}: approval request #${result.request.id} opened; a second operator must approve it`
        )
      } else {
        this.logger.success(
          `line #${result.lineId}: ${formatAmount(result.credited)} THB credited to ${result.merchant.merchantId} (fee ${formatAmount(result.fee)})`
        )
      }
    })
  }
}
