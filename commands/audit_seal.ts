import { BaseCommand } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/** What the worker's audit.seal does every 10 s, once: seals the audit rows that have no seal yet. */
export default class AuditSeal extends BaseCommand {
  static commandName = 'audit:seal'
  static description =
    'Seal the audit rows written since the last seal into the audit chain (the worker does it every 10 s)'
  static options: CommandOptions = { startApp: true }

  async run() {
    const { sealAuditLog } = await import('#core/audit_chain')
    const result = await sealAuditLog()
    if (!result.chain) {
      this.logger.error(
        'The audit chain was never started (no audit_chain_head row): nothing sealed'
      )
      this.exitCode = 1
      return
    }
    this.logger.success(
      `Sealed ${result.sealed} audit row(s); the chain ends at seal #${result.lastSeq}`
    )
  }
}
