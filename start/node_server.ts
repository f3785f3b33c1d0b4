import { createServer as createHttpServer } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { readFile } from 'node:fs/promises'
import { ensureDevelopmentCertificate } from '#services/tls_certificate'

type Handler = (req: IncomingMessage, res: ServerResponse) => any

/**
 * Decides how the process listens, before the app boots:
 * - TLS_CERT_PATH + TLS_KEY_PATH: HTTPS with that certificate;
 * - otherwise, outside production and unless TLS_SELF_SIGNED=false: HTTPS with
 *   a self-signed development certificate kept in tmp/tls;
 * - otherwise plain HTTP, for a deployment behind a TLS-terminating proxy listed
 *   in TRUSTED_PROXIES (the merchant API still refuses non-HTTPS calls).
 */
export async function createNodeServerFactory(appRoot: URL) {
  const certPath = process.env.TLS_CERT_PATH
  const keyPath = process.env.TLS_KEY_PATH
  const isProduction = process.env.NODE_ENV === 'production'
  const selfSigned = (process.env.TLS_SELF_SIGNED ?? (isProduction ? 'false' : 'true')) === 'true'

  let tls: { cert: Buffer | string; key: Buffer | string } | undefined
  if (certPath && keyPath) {
    tls = { cert: await readFile(certPath), key: await readFile(keyPath) }
  } else if (selfSigned) {
    tls = await ensureDevelopmentCertificate(new URL('tmp/tls/', appRoot))
  }

  process.env.GATEWAY_SCHEME = tls ? 'https' : 'http'
  return (handler: Handler) =>
    tls ? createHttpsServer({ ...tls, minVersion: 'TLSv1.2' }, handler) : createHttpServer(handler)
}
