import { BaseCommand, args } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/**
 * Re-delivers the callback(s) of one order: each row goes back to pending in a
 * new attempt series (new job id, up to 5 attempts again), whatever its state.
 * The worker (`queue:work`, queue callbacks) does the posting.
 */
export default class CallbacksResend extends BaseCommand {
  static commandName = 'callbacks:resend'
  static description = "Deliver an order's merchant callback(s) again (new attempt series)"
  static options: CommandOptions = { startApp: true }

  @args.string({ description: 'platform_order_id of the payment, withdrawal or settlement' })
  declare platformOrderId: string

  async run() {
    const { resendCallbacks } = await import('#callbacks/resend')
    const { cliActor } = await import('#services/audit')
    const { default: CallbackOutbox } = await import('#models/callback_outbox')

    const resent = await resendCallbacks(this.platformOrderId.trim(), cliActor())
    if (resent.length === 0) {
      this.logger.error(
        `No callback for ${this.platformOrderId} (unknown order, not final yet, or no notify_url)`
      )
      this.exitCode = 1
      return
    }
    // The job is added after the commit; without Redis the worker's sweep adds it later.
    const rows = await CallbackOutbox.findMany(resent.map((row) => row.outboxId))
    for (const row of resent) {
      const queued = rows.find((entry) => entry.id === row.outboxId)?.jobId === row.jobId
      this.logger.success(
        `${this.platformOrderId} ${row.status}: was ${row.previousState}, ` +
          (queued
            ? `queued as ${row.jobId}`
            : `pending; the worker's sweep will queue ${row.jobId} (Redis unavailable now)`)
      )
    }
  }
}
