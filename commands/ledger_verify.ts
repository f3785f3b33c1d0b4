import { BaseCommand, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

export default class LedgerVerify extends BaseCommand {
  static commandName = 'ledger:verify'
  static description =
    'Check that every ledger transaction balances and every merchant balance equals its entries (recorded for monitoring); exits 1 on any drift'
  static options: CommandOptions = { startApp: true }

  @flags.boolean({ description: 'Print the result as one JSON object' })
  declare json?: boolean

  async run() {
    const { runLedgerCheck } = await import('#ledger/verify')
    const { cliActor } = await import('#core/actor')
    const result = await runLedgerCheck(cliActor())
    if (this.json) {
      console.log(JSON.stringify({ ok: result.drifts.length === 0, ...result }))
    } else if (result.drifts.length === 0) {
      this.logger.success(
        `Ledger balanced: ${result.transactions} transactions, ${result.merchants} merchants, no drift`
      )
    } else {
      this.logger.error(`Ledger drift found (${result.drifts.length}):`)
      for (const drift of result.drifts) this.logger.error(`  ${drift.kind}: ${drift.detail}`)
    }
    if (result.drifts.length > 0) this.exitCode = 1
  }
}
