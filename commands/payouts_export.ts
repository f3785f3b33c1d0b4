import { BaseCommand, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

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
    const { exportBulkPayouts } = await import('#payouts/bulk_export')
    const { isBankCode } = await import('#services/banks')
    const { recordAudit, cliActor } = await import('#services/audit')
    if (this.bank !== undefined && !isBankCode(this.bank)) {
      this.logger.error(`Unknown bank code ${this.bank}`)
      this.exitCode = 1
      return
    }
    const result = await exportBulkPayouts(this.app.makePath(this.out), this.bank)
    if (result.files.length > 0) {
      await recordAudit({
        actor: cliActor(),
        action: 'payouts.export',
        subjectType: 'payout_batch',
        subjectId: result.batchId,
        details: {
          files: result.files.map(({ bank, orders, total }) => ({ bank, orders, total })),
        },
      })
    }
    if (this.json) {
      console.log(JSON.stringify(result))
      return
    }
    if (result.files.length === 0) {
      this.logger.info('No queued bulk-file payouts')
      return
    }
    for (const file of result.files) {
      this.logger.success(`${file.bank}: ${file.orders} payouts, ${file.total} THB → ${file.path}`)
    }
  }
}
