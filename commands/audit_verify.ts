import { BaseCommand, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/**
 * The audit log against its seals (app/core/audit_chain.ts): each sealed row
 * as it is now, the chain's links, its head, and the rows left unsealed for
 * more than 10 minutes. Reads only, never seals. The worker runs the same
 * check daily; each run is recorded for monitoring and the audit page.
 */
export default class AuditVerify extends BaseCommand {
  static commandName = 'audit:verify'
  static description =
    'Check every sealed audit row against its seal and the chain of seals; exits 1 on a changed, deleted or unsealed row or a broken chain'
  static options: CommandOptions = { startApp: true }

  @flags.boolean({ description: 'Print the result as one JSON object' })
  declare json?: boolean

  async run() {
    const { runAuditChainCheck } = await import('#core/audit_chain')
    const { cliActor } = await import('#core/actor')
    const result = await runAuditChainCheck(cliActor())
    if (this.json) {
      console.log(JSON.stringify(result))
    } else {
      const start = result.start
        ? `from audit row #${result.start.auditLogId} (chain started ${result.start.startedAt})`
        : 'no chain start'
      if (result.ok) {
        this.logger.success(
          `Audit chain intact: ${result.sealed} row(s) sealed ${start}, none left unsealed`
        )
      } else {
        this.logger.error(
          `Audit chain broken: ${result.problemCount} problem(s) in ${result.sealed} seal(s) ${start}`
        )
        for (const problem of result.problems) {
          this.logger.error(`  ${problem.kind}: ${problem.detail}`)
        }
        if (result.problemCount > result.problems.length) {
          this.logger.error(`  … and ${result.problemCount - result.problems.length} more`)
        }
      }
      if (result.sealedLate.count > 0) {
        this.logger.warning(
          `${result.sealedLate.count} row(s) were sealed more than 10 minutes after they were written (the sealer was stopped, or rows were inserted with an earlier time): #${result.sealedLate.ids.join(', #')}`
        )
      }
    }
    if (!result.ok) this.exitCode = 1
  }
}
