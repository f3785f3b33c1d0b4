import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/** Ace adapter of the explain-debit-line action (the back-office uses the same one). */
export default class LinesExplain extends BaseCommand {
  static commandName = 'lines:explain'
  static description =
    'Account for a debit statement line no transfer explains (a bank charge): the gateway bears it'
  static options: CommandOptions = { startApp: true }

  @args.string({ description: 'Statement line id (a debit)' })
  declare line: string

  @flags.string({ description: 'Reason code (bank_charge, bank_correction, other)' })
  declare reason?: string

  @flags.string({ description: 'Why, in words (kept on the line and in the audit log)' })
  declare comment?: string

  async run() {
    const { explainDebitLine } = await import('#reconciliation/actions/explain_debit_line')
    const { runAction } = await import('#core/cli')
    const { cliActor } = await import('#core/actor')
    const { formatAmount } = await import('#core/money')
    await runAction(this, async () => {
      const result = await explainDebitLine(
        { statement_line_id: this.line, reason_code: this.reason, comment: this.comment },
        cliActor()
      )
      this.logger.success(
        `line #${result.lineId}: ${formatAmount(result.amount)} THB recorded as the gateway's cost`
      )
    })
  }
}
