import type { HttpContext } from '@adonisjs/core/http'
import { findOrderByUuid, pageState, paymentPageView } from '#deposits/payment_page'
import { PAGE_TEXT, pageLanguage } from '#deposits/payment_page_text'

/** The hosted payment page behind payment_url (customers, on a phone). */
export default class PaymentPageController {
  /** GET /pay/:uuid */
  async show({ params, request, response, view }: HttpContext) {
    const lang = pageLanguage(request.input('lang'), request.header('accept-language'))
    const order = await findOrderByUuid(params.uuid)
    response.header('Cache-Control', 'no-store')
    response.header('Referrer-Policy', 'no-referrer')
    response.header('X-Frame-Options', 'DENY')
    if (!order) {
      response.status(404)
      return view.render('pay/not_found', { t: PAGE_TEXT[lang], lang })
    }
    const page = await paymentPageView(order)
    return view.render('pay/show', { page, t: PAGE_TEXT[lang], lang })
  }

  /** GET /pay/:uuid/status: polled by the page to show the final state without a reload loop. */
  async status({ params, response }: HttpContext) {
    const order = await findOrderByUuid(params.uuid)
    response.header('Cache-Control', 'no-store')
    if (!order) return response.status(404).send({ state: 'not_found' })
    return { state: pageState(order), expire_at_ms: order.expireAt.toMillis() }
  }
}
