import type { HttpContext } from '@adonisjs/core/http'

/** What a log line writes instead of a secret path segment. */
export const REDACTED_SEGMENT = '[redacted]'

/** Route parameters that are one-time secrets (enrolment / password links). */
const SECRET_PARAMS = new Set(['token'])

/**
 * Paths whose segment after the prefix is a secret, for requests that match
 * no route (another method, a typo'd suffix) and so have no named params.
 */
const SECRET_PREFIXES = [/^(\/admin\/welcome\/)[^/]+/]

/**
 * The request's path (never its query string) as log lines may write it:
 * a one-time token in the path (`/admin/welcome/<token>`) becomes
 * `[redacted]`, whichever route matched or none.
 */
export function loggedUrl(ctx: Pick<HttpContext, 'request' | 'route'>): string {
  const url = ctx.request.url()
  const pattern = ctx.route?.pattern
  let redacted = url
  if (pattern && pattern.includes(':')) {
    const patternSegments = pattern.split('/')
    const urlSegments = url.split('/')
    for (const [index, segment] of patternSegments.entries()) {
      if (segment.startsWith('*')) break
      const name = segment.replace(/^:/, '').replace(/\?$/, '')
      if (segment.startsWith(':') && SECRET_PARAMS.has(name) && urlSegments[index] !== undefined) {
        urlSegments[index] = REDACTED_SEGMENT
      }
    }
    redacted = urlSegments.join('/')
  }
  for (const prefix of SECRET_PREFIXES) {
    redacted = redacted.replace(prefix, `$1${REDACTED_SEGMENT}`)
  }
  return redacted
}
