import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

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
    if (this.app.inProduction) {
      this.logger.error('sandbox:pay does not run in production')
      this.exitCode = 1
      return
    }
    const { default: PaymentOrder } = await import('#models/payment_order')
    const { sandboxPay } = await import('#reconciliation/sandbox_bank')
    const { parseAmount, formatAmount } = await import('#services/money')
    const { cliActor, recordAudit } = await import('#services/audit')

    const order = await PaymentOrder.findBy('platform_order_id', this.platformOrderId)
    if (!order) {
      this.logger.error(`No payment order ${this.platformOrderId}`)
      this.exitCode = 1
      return
    }
    const amount = this.amount === undefined ? undefined : parseAmount(this.amount)
    if (amount === null || amount === 0) {
      this.logger.error(`--amount ${this.amount} is not an amount with at most 2 decimals`)
      this.exitCode = 1
      return
    }
    const result = await sandboxPay(order, {
      amount,
      slipDirectory: this.app.tmpPath('slips'),
      actor: cliActor(),
    })
    await order.refresh()
    await recordAudit({
      actor: cliActor(),
      action: 'sandbox.pay',
      subjectType: 'payment',
      subjectId: order.platformOrderId,
      details: {
        amount: result.amount,
        trans_ref: result.transRef,
        results: result.summary.results,
      },
    })
    if (this.json) {
      console.log(JSON.stringify({ ...result, order_status: order.status }))
      return
    }
    const outcome = result.summary.results
    const verdict = outcome.matched
      ? 'matched'
      : outcome.late
        ? 'late (the order had expired)'
        : 'unmatched'
    this.logger.success(
      `Sandbox bank received ${formatAmount(result.amount)} THB for ${order.platformOrderId}: ${verdict}; order is now ${order.status}`
    )
    this.logger.info(`Slip image: ${result.slipPath}`)
  }
}
