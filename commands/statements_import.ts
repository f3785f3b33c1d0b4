import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'
import { readFile } from 'node:fs/promises'
import { basename } from 'node:path'

export default class StatementsImport extends BaseCommand {
  static commandName = 'statements:import'
  static description =
    "Import a deposit account's bank statement (CSV) and match its lines to orders; importing a file twice adds nothing"
  static options: CommandOptions = { startApp: true }

  @args.string({ description: 'Path of the statement file' })
  declare file: string

  @flags.number({
    description: 'Id of the deposit account the statement belongs to',
    required: true,
  })
  declare account: number

  @flags.string({ description: 'File layout: neutral (default) or kbank', default: 'neutral' })
  declare layout: string

  @flags.boolean({ description: 'Print the summary as one JSON object' })
  declare json?: boolean

  async run() {
    const { default: DepositAccount } = await import('#models/deposit_account')
    const { importStatement } = await import('#reconciliation/import_statement')
    const { LAYOUTS } = await import('#reconciliation/layouts/index')
    const { StatementFormatError } = await import('#reconciliation/statement_line')
    const { cliActor, recordAudit } = await import('#services/audit')

    if (!(this.layout in LAYOUTS)) {
      this.logger.error(`Unknown layout ${this.layout}; known: ${Object.keys(LAYOUTS).join(', ')}`)
      this.exitCode = 1
      return
    }
    const account = await DepositAccount.find(this.account)
    if (!account) {
      this.logger.error(`No deposit account ${this.account}`)
      this.exitCode = 1
      return
    }
    let content: string
    try {
      content = await readFile(this.file, 'utf8')
    } catch (error) {
      this.logger.error(`Cannot read ${this.file}: ${(error as Error).message}`)
      this.exitCode = 1
      return
    }
    try {
      const summary = await importStatement(
        account,
        this.layout as keyof typeof LAYOUTS,
        basename(this.file),
        content,
        cliActor()
      )
      await recordAudit({
        actor: cliActor(),
        action: 'statement.import',
        subjectType: 'deposit_account',
        subjectId: String(account.id),
        details: { file: basename(this.file), layout: this.layout, ...summary },
      })
      if (this.json) {
        console.log(JSON.stringify(summary))
        return
      }
      const { matched, unmatched, late } = summary.results
      this.logger.success(
        `${summary.lines} lines, ${summary.newLines} new: ${matched} matched, ${late} late, ${unmatched} unmatched`
      )
    } catch (error) {
      if (!(error instanceof StatementFormatError)) throw error
      this.logger.error(`Nothing imported: ${error.message}`)
      this.exitCode = 1
    }
  }
}
