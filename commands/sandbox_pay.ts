import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/** Ace adapter of the sandbox-pay action (development only). */
export default class SandboxPay extends BaseCommand {
  static commandName = 'sandbox:pay'
  static description =
    "Make the sandbox bank receive the customer's transfer for a payment order (statement line + slip image)"
  static options: CommandOptions = { startApp: true }

  @args.string({ description: 'platform_order_id of the payment order' })
  declare platformOrderId: string

  @flags.string({
    description: "Amount the customer transfers (default: the order's transfer_amount)",
  })
  declare amount?: string

  @flags.boolean({ description: 'Print the result as one JSON object' })
  declare json?: boolean

  async run() {
    const { sandboxPay } = await import('#reconciliation/actions/sandbox_pay')
    const { formatAmount } = await import('#core/money')
    const { runAction } = await import('#core/cli')
    const { cliActor } = await import('#core/actor')
    await runAction(this, async () => {
      const { orderStatus, ...result } = await sandboxPay(
        { platform_order_id: this.platformOrderId, amount: this.amount },
        cliActor()
      )
      if (this.json) {
        console.log(JSON.stringify({ ...result, order_status: orderStatus }))
        return
      }
      const outcome = result.summary.results
      const verdict = outcome.matched
        ? 'matched'
        : outcome.late
          ? 'late (the order had expired)'
          : 'unmatched'
      this.logger.success(
        `Sandbox bank received ${formatAmount(result.amount)} THB for ${this.platformOrderId.trim()}: ${verdict}; order is now ${orderStatus}`
      )
      this.logger.info(`Slip image: ${result.slipPath}`)
    })
  }
}
