import type { HttpContext } from '@adonisjs/core/http'
import { sendSuccess } from '#merchant_api/envelope'
import { readMerchantBalance } from '#ledger/ledger'
import { amountJson } from '#core/money'

export default class BalanceController {
  /** POST /balance: the three figures of the merchant's ledger projection. */
  async handle(ctx: HttpContext) {
    const balance = await readMerchantBalance(ctx.merchant.id)
    sendSuccess(ctx, {
      balance: amountJson(balance.balance),
      freeze_balance: amountJson(balance.freezeBalance),
      unsettle_balance: amountJson(balance.unsettleBalance),
    })
  }
}
