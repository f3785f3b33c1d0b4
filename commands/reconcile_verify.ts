import { BaseCommand, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/**
 * The ledger against the bank: per deposit account and day, the ledger's
 * bank account equals the statement lines; every merchant credit from a
 * deposit claims one receipt (or an open receivable younger than the
 * window); no receipt is claimed twice; the clearing accounts hold only the
 * listed open items. The worker runs the same check daily; a check run from
 * here is audited as one run from the back-office.
 */
export default class ReconcileVerify extends BaseCommand {
  static commandName = 'reconcile:verify'
  static description =
    'Check the ledger against the bank statements, account by account and day by day; exits 1 on any problem'
  static options: CommandOptions = { startApp: true }

  @flags.boolean({ description: 'Print the result as one JSON object' })
  declare json?: boolean

  async run() {
    const { checkReconciliationNow } =
      await import('#reconciliation/actions/check_reconciliation_now')
    const { formatAmount } = await import('#core/money')
    const { cliActor } = await import('#core/actor')
    const { result } = await checkReconciliationNow(cliActor())
    if (this.json) {
      console.log(JSON.stringify(result))
    } else {
      const receivables = result.openReceivables
      const summary =
        `${result.days.length} account-days, ${result.unclaimed.lines} unclaimed credit lines ` +
        `(${formatAmount(result.unclaimed.amount)} THB), ${receivables.length} open receivables ` +
        `(${formatAmount(receivables.reduce((total, item) => total + item.amount, 0))} THB)`
      if (result.ok) {
        this.logger.success(`Ledger reconciled with the bank: ${summary}`)
      } else {
        this.logger.error(`Ledger and bank disagree (${result.problems.length}): ${summary}`)
        for (const problem of result.problems) {
          this.logger.error(`  ${problem.kind}: ${problem.detail}`)
        }
      }
      for (const item of receivables.filter((receivable) => !receivable.stale)) {
        this.logger.info(
          `  waiting for its line: ${item.platformOrderId} ${formatAmount(item.amount)} THB, ${Math.floor(item.ageHours)} h`
        )
      }
    }
    if (!result.ok) this.exitCode = 1
  }
}
