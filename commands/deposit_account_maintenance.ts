import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

const OPERATIONS = ['schedule', 'cancel', 'list']

/**
 * Ace adapter of the maintenance-window actions: schedule a window for one
 * deposit account (--account) or every account of a bank (--bank), cancel
 * one, or list those in effect and to come (--all: recent ones too). Times
 * are Bangkok time ("2026-11-23 01:30"), an ISO 8601 time with its offset,
 * or "now".
 */
export default class DepositAccountMaintenance extends BaseCommand {
  static commandName = 'deposit-account:maintenance'
  static description =
    'Schedule, cancel or list maintenance windows that take deposit accounts out of selection'
  static options: CommandOptions = { startApp: true }

  @args.string({ description: 'schedule, cancel or list' })
  declare operation: string

  @args.string({ description: 'Maintenance window id (cancel)', required: false })
  declare id?: string

  @flags.string({ description: 'schedule: the deposit account id taken out' })
  declare account?: string

  @flags.string({ description: 'schedule: every account of this bank code is taken out' })
  declare bank?: string

  @flags.string({ description: 'schedule: start, Bangkok time YYYY-MM-DD HH:mm (default now)' })
  declare from?: string

  @flags.string({ description: 'schedule: end, Bangkok time YYYY-MM-DD HH:mm' })
  declare to?: string

  @flags.string({ description: 'schedule: why (kept with the window and in the audit log)' })
  declare reason?: string

  @flags.string({ description: 'cancel: why (kept in the audit log)' })
  declare comment?: string

  @flags.boolean({ description: 'list: recent ended and cancelled windows too' })
  declare all?: boolean

  @flags.boolean({ description: 'Print JSON' })
  declare json?: boolean

  async run() {
    const { runAction } = await import('#core/cli')
    const { cliActor } = await import('#core/actor')
    const { presentMaintenanceWindow, listMaintenanceWindows } =
      await import('#payments/maintenance_windows')
    if (!OPERATIONS.includes(this.operation)) {
      this.logger.error(
        `operation must be one of ${OPERATIONS.join(', ')}, not "${this.operation}"`
      )
      this.exitCode = 1
      return
    }

    if (this.operation === 'list') {
      const windows = await listMaintenanceWindows({ all: this.all })
      if (this.json) {
        console.log(JSON.stringify(windows.map((window) => presentMaintenanceWindow(window))))
        return
      }
      if (windows.length === 0) {
        this.logger.info('No maintenance windows in effect or to come')
        return
      }
      const table = this.ui.table()
      table.head(['id', 'takes out', 'from (GMT+7)', 'to (GMT+7)', 'status', 'reason'])
      for (const window of windows) {
        const shown = presentMaintenanceWindow(window)
        table.row([
          String(shown.id),
          describeScope(shown),
          shown.from!,
          shown.to!,
          shown.status,
          shown.reason,
        ])
      }
      table.render()
      return
    }

    await runAction(this, async () => {
      if (this.operation === 'schedule') {
        const { scheduleMaintenanceWindow } =
          await import('#payments/actions/schedule_maintenance_window')
        const window = await scheduleMaintenanceWindow(
          {
            deposit_account_id: this.account,
            bank: this.bank,
            from: this.from,
            to: this.to,
            reason: this.reason,
          },
          cliActor()
        )
        const shown = presentMaintenanceWindow(window)
        if (this.json) return console.log(JSON.stringify(shown))
        this.logger.success(
          `Maintenance window ${shown.id}: ${describeScope(shown)} out of selection from ` +
            `${shown.from} to ${shown.to} (GMT+7)`
        )
        console.log(`id: ${shown.id}`)
        return
      }
      const { cancelMaintenanceWindow } =
        await import('#payments/actions/cancel_maintenance_window')
      const window = await cancelMaintenanceWindow(
        { id: this.id, comment: this.comment },
        cliActor()
      )
      const shown = presentMaintenanceWindow(window)
      if (this.json) return console.log(JSON.stringify(shown))
      this.logger.success(
        `Maintenance window ${shown.id} cancelled: ${describeScope(shown)} back in selection`
      )
    })
  }
}

function describeScope(window: { deposit_account_id: number | null; bank: string | null }) {
  return window.bank
    ? `every ${window.bank} account`
    : `deposit account ${window.deposit_account_id}`
}
