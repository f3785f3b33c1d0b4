import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/**
 * Ace adapter of the release of a bulk-file payout the bank rejected (the
 * back-office's payout page uses the same action). It only opens the
 * approval request: a second operator approves it in the back-office, never
 * the command line (four eyes always).
 */
export default class PayoutsReleaseRejected extends BaseCommand {
  static commandName = 'payouts:release-rejected'
  static description =
    "Ask a second operator to release a bulk-file payout the bank rejected (it fails, the merchant's hold goes back to its balance)"
  static options: CommandOptions = { startApp: true }

  @args.string({
    description: 'platform_order_id (marker W or M) of a payout whose file is at the bank',
  })
  declare platformOrderId: string

  @flags.string({
    description:
      'How the bank said it rejected the transfer (kept with the request and in the audit log)',
  })
  declare reason?: string

  async run() {
    const { requestPayoutRelease } = await import('#payouts/actions/release_rejected_payout')
    const { runAction } = await import('#core/cli')
    const { cliActor } = await import('#core/actor')
    const { formatThb } = await import('#core/money')
    await runAction(this, async () => {
      const { order, request } = await requestPayoutRelease(
        { platform_order_id: this.platformOrderId, reason: this.reason },
        cliActor()
      )
      this.logger.success(
        `${order.platformOrderId}: approval request #${request.id} opened; a second operator releases it ` +
          `(${formatThb(request.amount ?? 0)} THB back to the merchant's balance) from Review → Approvals`
      )
    })
  }
}
