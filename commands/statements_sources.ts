import { BaseCommand } from '@adonisjs/core/ace'
import { flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/** Lists the statement sources: channel, where, state, last fetch and error (never a secret). */
export default class StatementsSources extends BaseCommand {
  static commandName = 'statements:sources'
  static description =
    'List the statement sources (SFTP directories, IMAP mailboxes) with their last fetch and error'
  static options: CommandOptions = { startApp: true }

  @flags.boolean({ description: 'Print them as JSON, one object per line' })
  declare json?: boolean

  async run() {
    const { listSources } = await import('#admin/queries/statement_sources')
    const sources = await listSources()
    if (sources.length === 0) this.logger.info('No statement source')
    for (const source of sources) {
      if (this.json) {
        console.log(JSON.stringify(source))
        continue
      }
      console.log(
        `${source.id} account ${source.deposit_account_id} ${source.kind} "${source.name}" ${source.endpoint} ${source.where} ` +
          `[${source.state}] last fetch ${source.last_fetched_at ?? 'never'}, last success ${source.last_success_at ?? 'never'}` +
          (source.last_error ? `, error: ${source.last_error}` : '')
      )
    }
  }
}
