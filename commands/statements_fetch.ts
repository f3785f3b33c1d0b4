import { BaseCommand, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/**
 * Fetches statement files from the bank's channels now, in this process:
 * one source (`--source`, due or not, on or off), or every source due, then
 * tells the statements missing past their hour (what the worker's
 * `statements.fetch` does every minute). Each file is imported once.
 */
export default class StatementsFetch extends BaseCommand {
  static commandName = 'statements:fetch'
  static description =
    "Fetch statement files from the banks' SFTP directories and mailboxes now and import each new one once"
  static options: CommandOptions = { startApp: true }

  @flags.number({ description: 'Only this statement source (see statements:sources), due or not' })
  declare source?: number

  @flags.boolean({ description: 'Print the results as one JSON object' })
  declare json?: boolean

  async run() {
    const { fetchStatements, fetchDueSources } =
      await import('#reconciliation/fetch/fetch_statements')
    const { checkMissingStatements } = await import('#reconciliation/fetch/missing_statements')
    const { runAction } = await import('#core/cli')
    await runAction(this, async () => {
      const results = this.source
        ? [await fetchStatements(this.source, { force: true })]
        : await fetchDueSources()
      const missing = this.source ? null : await checkMissingStatements()
      if (this.json) {
        console.log(JSON.stringify({ results, missing: missing?.missing ?? [] }))
      } else {
        if (results.length === 0) this.logger.info('No statement source is due')
        for (const result of results) {
          const imported = result.files.filter((file) => file.outcome === 'imported')
          const line = `source ${result.source_id}: ${result.status}, ${result.files.length} files, ${imported.length} imported${
            imported.length ? ` (imports ${imported.map((file) => file.import_id).join(', ')})` : ''
          }`
          if (result.status === 'failed') this.logger.error(`${line}: ${result.error}`)
          else this.logger.info(line)
        }
        for (const id of missing?.missing ?? []) {
          this.logger.warning(`source ${id}: today's statement is missing past its hour`)
        }
      }
      if (results.some((result) => result.status === 'failed')) this.exitCode = 1
    })
  }
}
