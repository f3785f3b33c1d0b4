import type { HttpContext } from '@adonisjs/core/http'
import app from '@adonisjs/core/services/app'
import {
  acceptsSlips,
  findOrderByUuid,
  pageState,
  paymentPageView,
  type PageState,
} from '#payment_page/payment_page'
import {
  PAGE_TEXT,
  SLIP_NOTICES,
  pageLanguage,
  slipNotice,
  type PageLanguage,
  type SlipNotice,
} from '#payment_page/payment_page_text'
import { readSlipForm } from '#payment_page/slip_form'
import { setPaymentPageHeaders } from '#payment_page/page_headers'
import { PaymentPageSlipRateLimit } from '#payment_page/slip_rate_limit'
import { uploadSlip } from '#slips/actions/upload_slip'
import { isRefusal, type DomainRefusal } from '#core/refusals'
import { RedisConnections } from '#core/redis'
import type { Actor } from '#core/actor'
import paymentsConfig from '#config/payments'
import type PaymentOrder from '#payments/models/payment_order'

const slipLimits = paymentsConfig.paymentPageSlips

let rateLimit: PaymentPageSlipRateLimit | undefined
async function slipRateLimit() {
  rateLimit ??= new PaymentPageSlipRateLimit(
    (await app.container.make(RedisConnections)).main,
    slipLimits.perIpPerMinute
  )
  return rateLimit
}

// Kept importable from here: the policy and headers live in page_headers.ts,
// which the exception handler also uses for the error pages under /pay/.
export { paymentPageCsp } from '#payment_page/page_headers'

function pageHeaders({ response, view }: Pick<HttpContext, 'response' | 'view'>) {
  view.share({ cspNonce: setPaymentPageHeaders(response) })
}

/** The slip notice at the top of the page, in the page's language. */
function noticeView(flag: SlipNotice | null, state: PageState, lang: PageLanguage) {
  // A paid order needs no word about slips; a receipt only while slips still matter.
  if (!flag || state === 'paid') return null
  if (flag === 'received' && state !== 'pay' && state !== 'review') return null
  const megabytes = Math.floor(slipLimits.maxBytes / (1024 * 1024))
  return {
    flag,
    received: flag === 'received',
    text: PAGE_TEXT[lang].slipNotice[SLIP_NOTICES[flag]].replace('{mb}', String(megabytes)),
  }
}

/**
 * What the customer is told about a refusal of the upload action. Whatever
 * the verification found is never shown here: operators see it.
 */
function refusalNotice(error: DomainRefusal): SlipNotice {
  switch (error.kind) {
    case 'slip_upload_too_soon':
      return 'wait'
    case 'slip_limit_reached':
      return 'too-many'
    case 'slips_not_accepted':
    case 'order_not_found':
      return 'closed'
    case 'invalid_slip_image':
      return 'not-image'
    default:
      return 'failed'
  }
}

/** The customer who has the payment page open. */
function customerActor(request: HttpContext['request']): Actor {
  return { name: 'customer', ip: request.ip(), requestId: request.id() ?? null }
}

/**
 * Back to the page with the upload's outcome (303, `?slip=<outcome>`).
 * Refusals are outcomes, not errors: one line for whoever looks into a complaint.
 */
function backToPage(
  { params, response, logger }: Pick<HttpContext, 'params' | 'response' | 'logger'>,
  lang: PageLanguage,
  flag: SlipNotice,
  reason?: string
) {
  if (flag !== 'received') {
    logger.info(
      { slip: flag, uuid: String(params.uuid).slice(0, 64), reason },
      'payment page slip upload refused'
    )
  }
  response
    .redirect()
    .status(303)
    .toPath(`/pay/${encodeURIComponent(String(params.uuid))}?lang=${lang}&slip=${flag}`)
}

/**
 * Counted before the body is read; the seconds to wait, or null. Customers
 * of one mobile carrier share a source address: a request for an open order
 * (`openOrder`) counts against that address and that order only, so a
 * customer who retries too fast never stops another customer's upload; the
 * rest (unknown or closed orders) count per address.
 */
async function uploadTooSoon(request: HttpContext['request'], openOrder: PaymentOrder | null) {
  const limit = await slipRateLimit()
  return limit.consume(openOrder ? `${request.ip()}|${openOrder.uuid}` : request.ip())
}

/** The customer's slip to the upload action; a refusal becomes the notice they see. */
async function sendSlip(
  order: PaymentOrder,
  image: Uint8Array,
  request: HttpContext['request']
): Promise<{ flag: SlipNotice; reason?: string }> {
  try {
    await uploadSlip({ order, image, source: 'payment_page', actor: customerActor(request) })
  } catch (error) {
    if (isRefusal(error)) return { flag: refusalNotice(error), reason: error.message }
    throw error
  }
  return { flag: 'received' }
}

/** The hosted payment page behind payment_url (customers, on a phone). */
export default class PaymentPageController {
  /** GET /pay/:uuid (`?slip=` names the outcome of an upload just made) */
  async show({ params, request, response, view }: HttpContext) {
    const lang = pageLanguage(request.input('lang'), request.header('accept-language'))
    const order = await findOrderByUuid(params.uuid)
    pageHeaders({ response, view })
    if (!order) {
      response.status(404)
      return view.render('pay/not_found', { t: PAGE_TEXT[lang], lang })
    }
    const page = await paymentPageView(order)
    const notice = noticeView(slipNotice(request.input('slip')), page.state, lang)
    return view.render('pay/show', { page, t: PAGE_TEXT[lang], lang, notice })
  }

  /** GET /pay/:uuid/status: polled by the page to show the final state without a reload loop. */
  async status({ params, response }: HttpContext) {
    const order = await findOrderByUuid(params.uuid)
    // JSON, but under /pay/ like the page: the same headers on every answer.
    setPaymentPageHeaders(response)
    if (!order) return response.status(404).send({ state: 'not_found' })
    return { state: pageState(order), expire_at_ms: order.expireAt.toMillis() }
  }

  /**
   * POST /pay/:uuid/slip: a slip from the page's plain form (multipart, field
   * `slip`). Every outcome goes back to the page (303, `?slip=<outcome>`), so
   * it works without JavaScript and a reload does not send the slip again.
   */
  async uploadSlip(ctx: HttpContext) {
    const { params, request, response, view } = ctx
    const lang = pageLanguage(request.qs().lang, request.header('accept-language'))
    pageHeaders({ response, view })
    const back = (flag: SlipNotice, reason?: string) => backToPage(ctx, lang, flag, reason)
    const order = await findOrderByUuid(params.uuid)
    const open = order !== null && acceptsSlips(order)
    const retryAfter = await uploadTooSoon(request, open ? order : null)
    if (retryAfter !== null) {
      response.header('Retry-After', String(retryAfter))
      return back('rate-limited')
    }
    if (!order) {
      response.status(404)
      return view.render('pay/not_found', { t: PAGE_TEXT[lang], lang })
    }
    if (!open) return back('closed')
    const form = await readSlipForm(request, slipLimits.maxBytes)
    if (form.kind !== 'image') return back(form.kind)
    const outcome = await sendSlip(order, form.bytes, request)
    return back(outcome.flag, outcome.reason)
  }
}
