import type { HttpContext } from '@adonisjs/core/http'
import { inject } from '@adonisjs/core'
import { sendSuccess } from '#merchant_api/envelope'
import { validatePayoutCreate } from '#merchant_api/validators/payout_create'
import { CreatePayout } from '#payouts/actions/create_payout'
import { findMerchantPayout } from '#payouts/find_payout'
import {
  presentCreatedSettlement,
  presentCreatedWithdraw,
  presentSettlementStatus,
  presentWithdrawStatus,
} from '#merchant_api/presenters/payout_presenter'

@inject()
export default class PayoutsController {
  constructor(private createPayout: CreatePayout) {}

  /** POST /withdraw/create */
  async createWithdraw(ctx: HttpContext) {
    const input = await validatePayoutCreate(ctx.merchantRequest.body)
    const order = await this.createPayout.execute(ctx.merchant, 'withdraw', input, ctx.requestKey)
    sendSuccess(ctx, presentCreatedWithdraw(order))
  }

  /** POST /withdraw/query */
  async queryWithdraw(ctx: HttpContext) {
    const order = await findMerchantPayout(
      ctx.merchant,
      'withdraw',
      ctx.merchantRequest.body.platform_order_id
    )
    sendSuccess(ctx, presentWithdrawStatus(order))
  }

  /** POST /thb-settlement/create */
  async createSettlement(ctx: HttpContext) {
    const input = await validatePayoutCreate(ctx.merchantRequest.body)
    const order = await this.createPayout.execute(ctx.merchant, 'settlement', input, ctx.requestKey)
    sendSuccess(ctx, presentCreatedSettlement(order))
  }

  /** POST /thb-settlement/query */
  async querySettlement(ctx: HttpContext) {
    const order = await findMerchantPayout(
      ctx.merchant,
      'settlement',
      ctx.merchantRequest.body.platform_order_id
    )
    sendSuccess(ctx, presentSettlementStatus(order))
  }
}
