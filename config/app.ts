import env from '#start/env'
import proxyAddr from 'proxy-addr'
import { defineConfig } from '@adonisjs/core/http'
import gateway from '#config/gateway'

/**
 * X-Forwarded-For and X-Forwarded-Proto are honoured only when the TCP peer is
 * one of TRUSTED_PROXIES; from anyone else they are ignored, so a client cannot
 * forge its source IP (IP whitelist) or claim HTTPS over plain HTTP.
 */
const trustProxy = proxyAddr.compile(gateway.trustedProxies)

/**
 * Connection timeouts of the Node server, applied by AdonisJS to the server
 * start/node_server.ts creates (docs/decisions.md, "Idle keep-alive
 * connections are kept 72 s"):
 * - keepAliveTimeout: an idle keep-alive connection is kept this long, and
 *   announced with `Keep-Alive: timeout=72`; Node closes it 1 s later
 *   (keepAliveTimeoutBuffer). Longer than the idle timeouts of merchants'
 *   HTTP clients and of load balancers (60 s is common), which must close
 *   first: a request sent on a connection the server is closing is lost.
 * - headersTimeout: the time to receive a request's headers, counted on a new
 *   connection from its opening; above the keep-alive time, so that a
 *   connection a proxy opens and leaves idle is not cut with a 408 sooner
 *   than an idle used one.
 * - requestTimeout: the time to receive a whole request, headers included;
 *   a minute more than the headers for a body of up to 4 MiB.
 */
const keepAliveTimeout = env.get('HTTP_KEEP_ALIVE_TIMEOUT_MS', 72_000)
const headersTimeout = env.get('HTTP_HEADERS_TIMEOUT_MS', keepAliveTimeout + 8000)
const requestTimeout = env.get('HTTP_REQUEST_TIMEOUT_MS', headersTimeout + 60_000)
if (keepAliveTimeout < 1000) {
  throw new Error('HTTP_KEEP_ALIVE_TIMEOUT_MS must be at least 1000 (it is announced in seconds)')
}
if (headersTimeout <= 0 || requestTimeout < headersTimeout) {
  throw new Error(
    'HTTP_HEADERS_TIMEOUT_MS must be above 0 and HTTP_REQUEST_TIMEOUT_MS at least as long'
  )
}

export const http = defineConfig({
  generateRequestId: true,
  allowMethodSpoofing: false,
  useAsyncLocalStorage: false,
  trustProxy,
  keepAliveTimeout,
  headersTimeout,
  requestTimeout,
  cookie: {
    domain: '',
    path: '/',
    maxAge: '2h',
    httpOnly: true,
    secure: true,
    sameSite: 'lax',
  },
})

export const appName = env.get('APP_NAME', 'thb-gateway')
