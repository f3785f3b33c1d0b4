import app from '@adonisjs/core/services/app'
import router from '@adonisjs/core/services/router'
import { type HttpContext, ExceptionHandler } from '@adonisjs/core/http'
import MerchantHttpsMiddleware from '#merchant_api/middleware/merchant_https_middleware'
import { GatewayError } from '#exceptions/gateway_error'
import { clientAborted, dependencyOutage } from '#exceptions/dependency_outage'
import { sendError } from '#merchant_api/envelope'
import { ActionError } from '#core/validation'
import { loggedUrl } from '#core/logged_url'
import { RequestAlreadyProcessed } from '#core/merchant_requests'
import { answerAgain } from '#merchant_api/stored_answers'
import { refusalAnswer } from '#merchant_api/refusal_statuses'
import { isRefusal } from '#core/refusals'
import { errorPageMessage } from '#payment_page/customer_messages'
import { setPaymentPageHeaders } from '#payment_page/page_headers'

/** Identifiers for framework errors that carry only an HTTP status. */
const IDENTIFIER_BY_STATUS: Record<number, string> = {
  400: 'invalid-inputs',
  403: 'permission-denied',
  404: 'not-found',
  405: 'method-not-allowed',
  409: 'duplicate-entry',
  413: 'payload-too-large',
  422: 'invalid-inputs',
  429: 'too-many-requests',
  503: 'service-unavailable',
}

/** Seconds a client should wait before retrying after a dependency outage. */
const RETRY_AFTER_SECONDS = 5

/**
 * What an error means for the answer and for the log:
 * - refusal: an outcome the API describes (a domain Refusal, mapped by
 *   refusal_statuses.ts; any GatewayError; 4xx framework errors such as an
 *   unknown route); logged at info, no stack;
 * - outage: MySQL or Redis briefly unreachable; 503, logged at warn with the
 *   cause only;
 * - aborted: the client went away while sending its body; nobody to answer;
 * - crash: anything else; 500, logged at error with the stack.
 */
interface Outcome {
  kind: 'refusal' | 'outage' | 'aborted' | 'crash'
  status: number
  identifier: string
  message: string
  data?: Record<string, unknown>
  /** Seconds for `Retry-After`, when waiting helps. */
  retryAfterSeconds?: number
  cause?: string
}

/**
 * Every response outside the HTML areas (hosted payment page, sandbox,
 * admin panel) is the merchant API's error envelope, including unknown routes
 * and crashes; the HTML areas get plain pages. A 5xx never carries a stack
 * trace; the message quotes the request id so support can find the log line.
 * The developer error page is shown only in development, and only for crashes.
 */
export default class HttpExceptionHandler extends ExceptionHandler {
  protected debug = app.inDev
  protected renderStatusPages = false

  async handle(error: unknown, ctx: HttpContext) {
    // The same bytes ran on another process meanwhile: its answer is this one's.
    if (error instanceof RequestAlreadyProcessed && (await answerAgain(ctx, error.key))) return
    if (isRouteNotFound(error) && router.match(ctx.request.url(), 'POST', false)) {
      error = await refuseMethod(ctx).catch((refusal) => refusal)
    }
    const outcome = describe(error, ctx)
    log(outcome, error, ctx)
    if (outcome.retryAfterSeconds !== undefined) {
      ctx.response.header('Retry-After', String(outcome.retryAfterSeconds))
    }

    if (isHtmlArea(ctx.request.url())) {
      if (outcome.kind === 'crash' && this.debug) return super.handle(error, ctx)
      if (isAdminArea(ctx.request.url())) return renderAdminPage(error, outcome, ctx)
      return renderPage(outcome, ctx)
    }
    if (outcome.status === 413) ctx.response.header('Connection', 'close')
    sendError(ctx, outcome.status, outcome.identifier, outcome.message, outcome.data)
  }

  async report() {
    // handle() logs every error once, at the level its kind deserves.
  }
}

function isRouteNotFound(error: unknown) {
  return (error as { code?: string } | undefined)?.code === 'E_ROUTE_NOT_FOUND'
}

/**
 * Another method on a POST-only endpoint (spec: any non-POST is 405). Routes
 * cannot list every method Node accepts (the generated route types cannot
 * name M-SEARCH), so GET, TRACE, PROPFIND, QUERY, CONNECT... all arrive here
 * as "route not found" on a path that has a POST route. The endpoint's HTTPS
 * check still comes first, as for its POST.
 */
async function refuseMethod(ctx: HttpContext): Promise<never> {
  await new MerchantHttpsMiddleware().handle(ctx, async () => {})
  ctx.response.header('Allow', 'POST')
  throw new GatewayError(
    405,
    'method-not-allowed',
    `${ctx.request.method()} is not allowed on ${loggedUrl(ctx)}; use POST`
  )
}

function isAdminArea(url: string) {
  return url === '/admin' || url.startsWith('/admin/')
}

function isHtmlArea(url: string) {
  return (
    url.startsWith('/pay/') ||
    url.startsWith('/sandbox/') ||
    url === '/admin' ||
    url.startsWith('/admin/')
  )
}

function log(outcome: Outcome, error: unknown, ctx: HttpContext) {
  // The merchant a merchant-API request authenticated as (not bound on the
  // request's logger: a second binding costs every request, not only these).
  const fields = {
    error: outcome.identifier,
    status: outcome.status,
    merchant_id: ctx.merchant?.merchantId,
  }
  switch (outcome.kind) {
    case 'refusal':
      return ctx.logger.info({ ...fields, data: outcome.data }, outcome.message)
    case 'aborted':
      return ctx.logger.info(fields, 'client closed the connection before its request was read')
    case 'outage':
      return ctx.logger.warn({ ...fields, cause: outcome.cause }, 'dependency unavailable')
    case 'crash':
      return ctx.logger.error({ ...fields, err: error }, 'unhandled error')
  }
}

function describe(error: unknown, ctx: HttpContext): Outcome {
  if (isRefusal(error)) {
    return { kind: 'refusal', message: error.message, ...refusalAnswer(error) }
  }
  if (error instanceof GatewayError) {
    return {
      kind: 'refusal',
      status: error.status,
      identifier: error.identifier,
      message: error.message,
      data: error.data,
    }
  }

  const candidate = error as { status?: number; code?: string; messages?: unknown }
  if (error instanceof ActionError) {
    return {
      kind: 'refusal',
      status: error.notFound ? 404 : 400,
      identifier: error.notFound ? 'not-found' : 'invalid-inputs',
      message: error.message,
    }
  }
  if (isRouteNotFound(error)) {
    return {
      kind: 'refusal',
      status: 404,
      identifier: 'not-found',
      message: `no endpoint ${ctx.request.method()} ${loggedUrl(ctx)}`,
    }
  }
  if (candidate?.code === 'E_VALIDATION_ERROR' && Array.isArray(candidate.messages)) {
    const fields = candidate.messages as Array<{ field: string; message: string }>
    return {
      kind: 'refusal',
      status: 400,
      identifier: 'invalid-inputs',
      message: fields.map((item) => `${item.field}: ${item.message}`).join('; '),
    }
  }
  if (clientAborted(error)) {
    return {
      kind: 'aborted',
      status: 400,
      identifier: 'invalid-inputs',
      message: 'the request body ended early',
    }
  }
  const cause = dependencyOutage(error)
  if (cause) {
    return {
      kind: 'outage',
      status: 503,
      identifier: 'service-unavailable',
      message: `service temporarily unavailable; retry with backoff (request id ${ctx.request.id()})`,
      retryAfterSeconds: RETRY_AFTER_SECONDS,
      cause,
    }
  }
  const status = typeof candidate?.status === 'number' ? candidate.status : 500
  if (status < 500 && IDENTIFIER_BY_STATUS[status]) {
    return {
      kind: 'refusal',
      status,
      identifier: IDENTIFIER_BY_STATUS[status],
      message: (error as Error).message,
    }
  }
  return {
    kind: 'crash',
    status: 500,
    identifier: 'internal-server-error',
    message: `internal server error; quote request id ${ctx.request.id()} to support`,
  }
}

/** A plain HTML page for the customer-facing areas: no stack, no framework page. */
async function renderPage(outcome: Outcome, ctx: HttpContext) {
  // The customer's words, Thai first like the payment page (one list in customer_messages.ts).
  const message = errorPageMessage(outcome.status)
  const text = {
    th: message.heading.th,
    en: message.heading.en,
    detailTh: message.detail.th,
    detailEn: message.detail.en,
  }
  ctx.response.status(outcome.status)
  if (ctx.request.url().startsWith('/pay/')) {
    // The payment page's own CSP, on its error pages too (docs/decisions.md).
    ctx.view.share({ cspNonce: setPaymentPageHeaders(ctx.response) })
  } else {
    ctx.response.header('Cache-Control', 'no-store')
    ctx.response.header('Referrer-Policy', 'no-referrer')
    ctx.response.header('X-Frame-Options', 'DENY')
  }
  const html = await ctx.view.render('errors/page', {
    text,
    status: outcome.status,
    // 5xx pages show the request id so that support can find the log line.
    reference: outcome.status >= 500 ? ctx.request.id() : null,
  })
  ctx.response.header('Content-Type', 'text/html; charset=utf-8')
  ctx.response.send(html)
}

/**
 * Back-office errors, as operators should see them: signed out → the login
 * page; a role that may not do this → 403; an expired form (CSRF) → back to
 * it with a message; anything else → a plain page, with the request id for
 * a 5xx. Never a stack trace outside development.
 */
async function renderAdminPage(error: unknown, outcome: Outcome, ctx: HttpContext) {
  const code = (error as { code?: string } | undefined)?.code
  if (code === 'E_UNAUTHORIZED_ACCESS') return ctx.response.redirect('/admin/login')
  if (code === 'E_BAD_CSRF_TOKEN' && 'session' in ctx) {
    ctx.session.flash('error', 'The form had expired; nothing was saved. Please try again.')
    return ctx.response.redirect().back()
  }
  const forbidden = code === 'E_AUTHORIZATION_FAILURE'
  const status = forbidden ? 403 : outcome.status
  const page =
    status === 404
      ? { heading: 'Not found', detail: 'There is nothing at this address.' }
      : status === 403
        ? {
            heading: 'Not allowed',
            detail: 'Your role does not allow this. Ask an administrator if you need it.',
          }
        : status >= 500
          ? {
              heading: status === 503 ? 'Temporarily unavailable' : 'Something went wrong',
              detail:
                status === 503
                  ? 'The database or Redis cannot be reached; try again in a moment.'
                  : 'The action failed and nothing was changed by this error.',
            }
          : { heading: 'Cannot do that', detail: outcome.message }
  ctx.response.status(status)
  ctx.response.header('Cache-Control', 'no-store')
  const operator = 'auth' in ctx ? (ctx.auth.user ?? null) : null
  const html = await ctx.view.render('admin/error', {
    ...page,
    status,
    reference: status >= 500 ? ctx.request.id() : null,
    operator,
  })
  ctx.response.header('Content-Type', 'text/html; charset=utf-8')
  ctx.response.send(html)
}
