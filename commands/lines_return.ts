import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/**
 * Ace adapter of the return-statement-line action (the back-office uses the
 * same one, where the return waits for an admin's approval). From the
 * server's shell it applies at once: a break-glass use, audited and notified
 * to every admin.
 */
export default class LinesReturn extends BaseCommand {
  static commandName = 'lines:return'
  static description =
    "Return an unmatched statement line to the payer's account (records the return and its ledger posting)"
  static options: CommandOptions = { startApp: true }

  @args.string({ description: 'Statement line id' })
  declare line: string

  @flags.string({ description: "The payer's bank code (KBANK, SCB, ...)" })
  declare bank?: string

  @flags.string({ description: "The payer's account number" })
  declare accountNo?: string

  @flags.string({ description: "The payer's account name" })
  declare accountName?: string

  @flags.string({ description: 'Reason code (no_matching_order, wrong_amount, ...)' })
  declare reason?: string

  @flags.string({ description: 'Why, in words (kept on the line and in the audit log)' })
  declare comment?: string

  async run() {
    const { returnStatementLine } = await import('#reconciliation/actions/return_statement_line')
    const { runAction } = await import('#core/cli')
    const { cliActor } = await import('#core/actor')
    const { formatAmount } = await import('#core/money')
    await runAction(this, async () => {
      const result = await returnStatementLine(
        {
          statement_line_id: this.line,
          bank: this.bank,
          account_no: this.accountNo,
          account_name: this.accountName,
          reason_code: this.reason,
          comment: this.comment,
        },
        cliActor()
      )
      if (result.outcome !== 'returned') throw new Error('a shell return applies at once')
      this.logger.success(
        `line #${result.lineId}: ${formatAmount(result.amount)} THB to be returned to ${result.bank} ${result.accountNo}`
      )
      this.logger.warning(
        'Break-glass: applied without a second person; recorded in the audit log and notified to every admin.'
      )
    })
  }
}
