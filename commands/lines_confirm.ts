import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/** Ace adapter of the confirm-debit-line action (the back-office uses the same one). */
export default class LinesConfirm extends BaseCommand {
  static commandName = 'lines:confirm'
  static description =
    'Say which transfer a debit statement line is: a withdrawal or settlement, or the return of a credit line'
  static options: CommandOptions = { startApp: true }

  @args.string({ description: 'Statement line id (a debit)' })
  declare line: string

  @flags.string({
    description: 'The withdrawal or settlement (platform_order_id) the debit paid out',
  })
  declare payout?: string

  @flags.string({ description: 'Or: the credit line whose return to the payer the debit is' })
  declare returnOf?: string

  @flags.string({ description: 'Why, in words (kept in the audit log)' })
  declare comment?: string

  async run() {
    const { confirmDebitLine } = await import('#reconciliation/actions/confirm_debit_line')
    const { runAction } = await import('#core/cli')
    const { cliActor } = await import('#core/actor')
    const { formatAmount } = await import('#core/money')
    await runAction(this, async () => {
      const result = await confirmDebitLine(
        {
          statement_line_id: this.line,
          platform_order_id: this.payout,
          returned_line_id: this.returnOf,
          comment: this.comment,
        },
        cliActor()
      )
      this.logger.success(
        `line #${result.lineId}: ${formatAmount(result.amount)} THB confirms ${result.what}`
      )
    })
  }
}
