import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { onDeadlockRetry } from '#core/db_retry'
import { httpRecording } from './http_metrics_middleware.js'
import { dbDeadlockRetries, registry } from './registry.js'
import { refreshSources } from './sources.js'

export type MetricsRole = 'web' | 'worker'

export interface MetricsServer {
  port: number
  close: () => Promise<void>
}

let stopDeadlockListener: (() => void) | undefined

/** Counts the retries of withDeadlockRetry (app/core/db_retry.ts), once per process. */
function listenToDeadlockRetries() {
  stopDeadlockListener ??= onDeadlockRetry((event) =>
    dbDeadlockRetries.labels(String(event.errno)).inc()
  )
}

/**
 * The process's Prometheus endpoint: `GET /metrics` on a port of its own
 * (plain HTTP, meant for the monitoring network; the merchant API's HTTPS
 * port never serves it). Every series carries `process="web"` or
 * `process="worker"`. A scrape answers within about 2.5 seconds whatever
 * MariaDB and Redis do (see sources.ts).
 */
export async function startMetricsServer(options: {
  port: number
  host: string
  role: MetricsRole
}): Promise<MetricsServer> {
  registry.setDefaultLabels({ process: options.role })
  httpRecording.on = options.role === 'web'
  listenToDeadlockRetries()

  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0]
    if (path !== '/metrics') {
      response.writeHead(404, { 'Content-Type': 'text/plain' }).end('Not found: GET /metrics\n')
      return
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { 'Allow': 'GET, HEAD', 'Content-Type': 'text/plain' }).end()
      return
    }
    refreshSources()
      .then(() => registry.metrics())
      .then((body) => {
        response.writeHead(200, {
          'Content-Type': registry.contentType,
          'Cache-Control': 'no-store',
        })
        response.end(request.method === 'HEAD' ? undefined : body)
      })
      .catch((error: Error) => {
        response.writeHead(500, { 'Content-Type': 'text/plain' }).end(`${error.message}\n`)
      })
  })
  // A scraper that stops reading must not hold the socket.
  server.requestTimeout = 10_000
  server.headersTimeout = 5_000
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, options.host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        httpRecording.on = false
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
