import app from '@adonisjs/core/services/app'
import { type HttpContext, ExceptionHandler } from '@adonisjs/core/http'
import { GatewayError } from '#exceptions/gateway_error'
import { sendError } from '#merchant_api/envelope'

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

/**
 * Every response outside the HTML areas (hosted payment page, admin panel) is
 * the merchant API's error envelope, including unknown routes and crashes.
 * A 5xx never carries a stack trace; it is logged with the request id, which
 * the message quotes so support can find the line.
 */
export default class HttpExceptionHandler extends ExceptionHandler {
  protected debug = !app.inProduction

  async handle(error: unknown, ctx: HttpContext) {
    if (isHtmlArea(ctx.request.url())) {
      return super.handle(error, ctx)
    }

    const { status, identifier, message, data } = describe(error, ctx)
    if (status >= 500) {
      ctx.logger.error({ err: error }, 'unhandled error in merchant API request')
    } else {
      ctx.logger.info({ error: identifier, status }, message)
    }
    if (status === 413) ctx.response.header('Connection', 'close')
    sendError(ctx, status, identifier, message, data)
  }

  async report(error: unknown, ctx: HttpContext) {
    // Merchant API errors are logged by handle() with their envelope identifier.
    if (isHtmlArea(ctx.request.url())) return super.report(error, ctx)
  }
}

function isHtmlArea(url: string) {
  return (
    url.startsWith('/pay/') ||
    url.startsWith('/sandbox/') ||
    url === '/admin' ||
    url.startsWith('/admin/')
  )
}

function describe(error: unknown, ctx: HttpContext) {
  if (error instanceof GatewayError) {
    return {
      status: error.status,
      identifier: error.identifier,
      message: error.message,
      data: error.data,
    }
  }

  const candidate = error as { status?: number; code?: string; messages?: unknown }
  if (candidate?.code === 'E_ROUTE_NOT_FOUND') {
    return {
      status: 404,
      identifier: 'not-found',
      message: `no endpoint ${ctx.request.method()} ${ctx.request.url()}`,
    }
  }
  if (candidate?.code === 'E_VALIDATION_ERROR' && Array.isArray(candidate.messages)) {
    const fields = candidate.messages as Array<{ field: string; message: string }>
    return {
      status: 400,
      identifier: 'invalid-inputs',
      message: fields.map((item) => `${item.field}: ${item.message}`).join('; '),
    }
  }
  const status = typeof candidate?.status === 'number' ? candidate.status : 500
  if (status < 500 && IDENTIFIER_BY_STATUS[status]) {
    return { status, identifier: IDENTIFIER_BY_STATUS[status], message: (error as Error).message }
  }
  return {
    status: 500,
    identifier: 'internal-server-error',
    message: `internal server error; quote request id ${ctx.request.id()} to support`,
  }
}
