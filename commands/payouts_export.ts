import { BaseCommand, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/** Ace adapter of the export-bulk-file action. */
export default class PayoutsExport extends BaseCommand {
  static commandName = 'payouts:export'
  static description =
    'Write queued bulk-file payouts to one CSV per destination bank and mark them pending'
  static options: CommandOptions = { startApp: true }

  @flags.string({ description: 'Directory for the files', default: 'tmp/payouts' })
  declare out: string

  @flags.string({ description: 'Only this destination bank (e.g. KBANK)' })
  declare bank?: string

  @flags.boolean({ description: 'Print the result as one JSON object' })
  declare json?: boolean

  async run() {
    const { exportBulkFile } = await import('#payouts/actions/export_bulk_file')
    const { runAction } = await import('#core/cli')
    const { cliActor } = await import('#core/actor')
    await runAction(this, async () => {
      const result = await exportBulkFile(
        { directory: this.out && this.app.makePath(this.out), bank: this.bank },
        cliActor()
      )
      if (this.json) {
        console.log(JSON.stringify(result))
        return
      }
      if (result.files.length === 0) {
        this.logger.info('No queued bulk-file payouts')
        return
      }
      for (const file of result.files) {
        this.logger.success(
          `${file.bank}: ${file.orders} payouts, ${file.total} THB → ${file.path}`
        )
      }
    })
  }
}
