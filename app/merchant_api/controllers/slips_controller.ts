import type { HttpContext } from '@adonisjs/core/http'
import { sendSerialized, successBody } from '#merchant_api/envelope'
import { keepAnswer } from '#merchant_api/stored_answers'
import { validateSlipUpload } from '#merchant_api/validators/slip_upload'
import { presentSlipUpload } from '#merchant_api/presenters/slip_presenter'
import { findMerchantPayment } from '#payments/find_payment'
import { uploadSlip } from '#slips/actions/upload_slip'
import { merchantActor } from '#core/actor'

export default class SlipsController {
  /** POST /slip/upload */
  async upload(ctx: HttpContext) {
    const input = await validateSlipUpload(ctx.merchantRequest.body)
    // The image is decoded into input.image: its base64 text (a third larger)
    // need not live on while the slip is read and stored.
    delete ctx.merchantRequest.body.image_base64
    const order = await findMerchantPayment(ctx.merchant, input.platformOrderId)
    // Refusals (a slip too soon: 429 with Retry-After) are answered by the exception handler.
    const result = await uploadSlip({
      order,
      image: input.image,
      source: 'merchant_api',
      actor: {
        ...merchantActor(ctx.merchant.merchantId),
        ip: ctx.request.ip(),
        requestId: ctx.request.id() ?? null,
      },
      request: ctx.requestKey,
    })
    const body = successBody(presentSlipUpload(result))
    sendSerialized(ctx, 200, body)
    // The answer as sent: the slip's verification may change later, its answer not.
    if (ctx.requestKey) await keepAnswer(ctx.requestKey, 200, body)
  }
}
