import type { HttpContext } from '@adonisjs/core/http'
import type { NextFn } from '@adonisjs/core/types/http'
import { httpDuration, httpRequests } from './registry.js'

/** Set by startMetricsServer(): a process without an endpoint records nothing. */
export const httpRecording = { on: false }

/** The merchant API's error envelope starts `{"code":<status>,"error":"<identifier>"`. */
const ERROR_IDENTIFIER = /^\{"code":\d{3},"error":"([a-z0-9-]{1,40})"/

/**
 * The children of the request counter and histogram, by their label values:
 * prom-client would otherwise sort and hash the labels on every request.
 */
type Children = {
  count: ReturnType<typeof httpRequests.labels>
  duration: ReturnType<typeof httpDuration.labels>
}
const children = new Map<string, Children>()

function childrenFor(route: string, method: string, status: string, error: string) {
  const key = `${route} ${method} ${status} ${error}`
  let found = children.get(key)
  if (!found) {
    found = {
      count: httpRequests.labels(route, method, status, error),
      duration: httpDuration.labels(route, method),
    }
    children.set(key, found)
  }
  return found
}

/** The API error identifier of a response, read from the envelope the gateway sent. */
function errorIdentifier(ctx: HttpContext, status: number) {
  if (status < 400) return ''
  const body = ctx.response.getBody()
  if (typeof body !== 'string') return ''
  return ERROR_IDENTIFIER.exec(body)?.[1] ?? ''
}

/**
 * Counts and times every request once its response is sent (errors rendered
 * by the exception handler too), by the route's pattern: `/pay/:uuid`, never
 * the URL, so that no order id or token reaches a label. A request no route
 * matched is `unmatched`.
 */
export default class HttpMetricsMiddleware {
  handle(ctx: HttpContext, next: NextFn) {
    if (!httpRecording.on) return next()
    const started = process.hrtime.bigint()
    const raw = ctx.response.response
    raw.once('finish', () => {
      const status = raw.statusCode
      const { count, duration } = childrenFor(
        ctx.route?.pattern ?? 'unmatched',
        ctx.request.method(),
        String(status),
        errorIdentifier(ctx, status)
      )
      count.inc()
      duration.observe(Number(process.hrtime.bigint() - started) / 1e9)
    })
    return next()
  }
}
