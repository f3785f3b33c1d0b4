import type { HttpContext } from '@adonisjs/core/http'
import type { NextFn } from '@adonisjs/core/types/http'

/**
 * Every back-office response (pages, exports, redirects, error pages) is sent
 * with `Cache-Control: no-store`, so that no browser or proxy keeps a copy of
 * an operator's orders, statements, audit log or recovery codes. A response
 * that set its own Cache-Control keeps it only if it already says no-store.
 */
export function enforceNoStore(response: HttpContext['response']) {
  const current = response.getHeader('Cache-Control')
  const value = Array.isArray(current) ? current.join(', ') : String(current ?? '')
  if (!/(^|[\s,])no-store($|[\s,])/i.test(value)) response.header('Cache-Control', 'no-store')
}

export default class AdminNoStoreMiddleware {
  async handle({ response }: HttpContext, next: NextFn) {
    // Before the handler, for responses an exception ends; after it, over whatever it set.
    enforceNoStore(response)
    try {
      return await next()
    } finally {
      enforceNoStore(response)
    }
  }
}
