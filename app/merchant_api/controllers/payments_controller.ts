import type { HttpContext } from '@adonisjs/core/http'
import { inject } from '@adonisjs/core'
import { sendSuccess } from '#merchant_api/envelope'
import { validatePaymentCreate } from '#merchant_api/validators/payment_create'
import { CreatePayment } from '#payments/actions/create_payment'
import {
  presentCreatedPayment,
  presentPaymentStatus,
} from '#merchant_api/presenters/payment_presenter'
import { findMerchantPayment } from '#payments/find_payment'
import type { PaymentType } from '#payments/models/payment_order'

@inject()
export default class PaymentsController {
  constructor(private createPayment: CreatePayment) {}

  /** POST /payment/create */
  create(ctx: HttpContext) {
    return this.#create(ctx, 'QR')
  }

  /** POST /payment/create-transfer */
  createTransfer(ctx: HttpContext) {
    return this.#create(ctx, 'TRANSFER')
  }

  /** POST /payment/create-flex */
  createFlex(ctx: HttpContext) {
    return this.#create(ctx, 'FLEX')
  }

  /** POST /payment/query */
  async query(ctx: HttpContext) {
    const order = await findMerchantPayment(
      ctx.merchant,
      ctx.merchantRequest.body.platform_order_id
    )
    sendSuccess(ctx, presentPaymentStatus(order))
  }

  async #create(ctx: HttpContext, type: PaymentType) {
    const input = await validatePaymentCreate(ctx.merchantRequest.body)
    const { order, platform } = await this.createPayment.execute(
      ctx.merchant,
      type,
      input,
      ctx.requestKey
    )
    sendSuccess(ctx, presentCreatedPayment(order, platform, order.depositAccount))
  }
}
