import type { HttpContext } from '@adonisjs/core/http'
import type { NextFn } from '@adonisjs/core/types/http'
import logger from '@adonisjs/core/services/logger'
import { loggedUrl } from '#core/logged_url'

/**
 * One structured line per request, written when the response has been sent so
 * that it carries the final status (also for errors rendered by the exception
 * handler). Bodies and headers are never logged here, nor the query string;
 * a one-time token in the path is written as `[redacted]`.
 */
export default class RequestLoggerMiddleware {
  async handle(ctx: HttpContext, next: NextFn) {
    // Below `info` (production's `warn`, for one) the line would be dropped:
    // no listener, no clock read, and the request's logger is never made.
    if (!logger.isLevelEnabled('info')) return next()
    const started = process.hrtime.bigint()
    ctx.response.response.once('finish', () => {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6
      ctx.logger.info(
        {
          method: ctx.request.method(),
          url: loggedUrl(ctx),
          status: ctx.response.response.statusCode,
          duration_ms: Math.round(durationMs * 10) / 10,
          ip: ctx.request.ip(),
          merchant_id: ctx.merchant?.merchantId,
        },
        'request completed'
      )
    })
    return next()
  }
}
