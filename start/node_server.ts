import { createServer as createHttpServer } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { readFile } from 'node:fs/promises'
import { ensureDevelopmentCertificate } from '#services/tls_certificate'

type Handler = (req: IncomingMessage, res: ServerResponse) => any

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/**
 * A caller may pass X-Request-Id to correlate its own logs with ours; anything
 * that is not a short token is dropped so that the gateway generates one and
 * log lines cannot be forged through it.
 */
export function withSanitizedRequestId(handler: Handler): Handler {
  return (req, res) => {
    const incoming = req.headers['x-request-id']
    if (incoming !== undefined && (typeof incoming !== 'string' || !REQUEST_ID.test(incoming))) {
      delete req.headers['x-request-id']
    }
    return handler(req, res)
  }
}

function flag(value: string | undefined, fallback: boolean) {
  if (value === undefined || value === '') return fallback
  return ['true', '1', 'yes', 'on'].includes(value.toLowerCase())
}

/**
 * Decides how the process listens, before the app boots (.env already loaded):
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
  const selfSigned = flag(process.env.TLS_SELF_SIGNED, !isProduction)

  if (!!certPath !== !!keyPath) {
    throw new Error('Set both TLS_CERT_PATH and TLS_KEY_PATH, or neither')
  }

  let tls: { cert: Buffer | string; key: Buffer | string } | undefined
  if (certPath && keyPath) {
    tls = { cert: await readFile(certPath), key: await readFile(keyPath) }
  } else if (selfSigned) {
    tls = await ensureDevelopmentCertificate(new URL('tmp/tls/', appRoot))
  }

  return (handler: Handler) =>
    tls
      ? createHttpsServer({ ...tls, minVersion: 'TLSv1.2' }, withSanitizedRequestId(handler))
      : createHttpServer(withSanitizedRequestId(handler))
}
