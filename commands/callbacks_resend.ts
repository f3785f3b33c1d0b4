import { BaseCommand, args } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/**
 * Ace adapter of the resend-callback action: each callback row of the order
 * goes back to pending in a new attempt series (new job id, up to 5 attempts
 * again), whatever its state. The worker (`queue:work`, queue callbacks)
 * does the posting.
 */
export default class CallbacksResend extends BaseCommand {
  static commandName = 'callbacks:resend'
  static description = "Deliver an order's merchant callback(s) again (new attempt series)"
  static options: CommandOptions = { startApp: true }

  @args.string({ description: 'platform_order_id of the payment, withdrawal or settlement' })
  declare platformOrderId: string

  async run() {
    const { resendCallback } = await import('#callbacks/actions/resend_callback')
    const { runAction } = await import('#core/cli')
    const { cliActor } = await import('#core/actor')
    await runAction(this, async () => {
      const resent = await resendCallback({ platform_order_id: this.platformOrderId }, cliActor())
      for (const row of resent) {
        this.logger.success(
          `${this.platformOrderId.trim()} ${row.status}: was ${row.previousState}, ` +
            (row.queued
              ? `queued as ${row.jobId}`
              : `pending; the worker's sweep will queue ${row.jobId} (Redis unavailable now)`)
        )
      }
    })
  }
}
