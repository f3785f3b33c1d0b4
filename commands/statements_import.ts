import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'
import { readFile } from 'node:fs/promises'
import { basename } from 'node:path'

/** Ace adapter of the import-statement action: reads the file and hands its text over. */
export default class StatementsImport extends BaseCommand {
  static commandName = 'statements:import'
  static description =
    "Import a deposit account's bank statement (CSV, or XLSX with a defined layout) and match its lines to orders; importing a file twice adds nothing"
  static options: CommandOptions = { startApp: true }

  @args.string({ description: 'Path of the statement file' })
  declare file: string

  @flags.number({
    description: 'Id of the deposit account the statement belongs to',
    required: true,
  })
  declare account: number

  @flags.string({
    description:
      "File layout: neutral, kbank, kbiz or a layout defined in the back-office (its current version); left out: a KBiz export by its title, else the deposit account's layout, else neutral",
  })
  declare layout?: string

  @flags.boolean({
    description:
      "Print the summary as one JSON object, with the import's own time (elapsedMs: reading the file to the summary)",
  })
  declare json?: boolean

  async run() {
    const { importStatement } = await import('#reconciliation/actions/import_statement')
    const { runAction } = await import('#core/cli')
    const { cliActor } = await import('#core/actor')
    const { formatThb } = await import('#core/money')
    // The import's own time, from reading the file to its summary (the
    // process's boot is not in it): printed with --json.
    const started = performance.now()
    // This process runs one import and exits: its heap is bounded for it
    // (import_memory.ts). Not when the command runs inside another process (tests).
    if (this.app.getEnvironment() === 'console') {
      const { boundImportMemory } = await import('#reconciliation/import_memory')
      boundImportMemory()
    }
    // Held here only until the import has it: it lets go of the file once stored.
    const file: { content: Buffer | null } = { content: null }
    try {
      file.content = await readFile(this.file)
    } catch (error) {
      this.logger.error(`Cannot read ${this.file}: ${(error as Error).message}`)
      this.exitCode = 1
      return
    }
    await runAction(this, async () => {
      const importing = importStatement(
        {
          deposit_account_id: this.account,
          layout: this.layout,
          file_name: basename(this.file),
          content: file.content,
        },
        cliActor(),
        { origin: { channel: 'command', detail: this.file } }
      )
      file.content = null
      const summary = await importing
      if (this.json) {
        const elapsedMs = Math.round(performance.now() - started)
        console.log(JSON.stringify({ ...summary, elapsedMs }))
        return
      }
      if (summary.confirmation) {
        this.logger.warning(
          `${summary.lines} lines, ${summary.newLines} new: waiting for a second operator (approval request #${summary.confirmation.id}): ` +
            `it would move ${formatThb(summary.confirmation.amount ?? 0)} THB, above a platform's four-eyes threshold; nothing is matched until it is confirmed`
        )
        return
      }
      const { matched, unmatched, late } = summary.results
      this.logger.success(
        `${summary.lines} lines, ${summary.newLines} new: ${matched} matched, ${late} late, ${unmatched} unmatched`
      )
    })
  }
}
