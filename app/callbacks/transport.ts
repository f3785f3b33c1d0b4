import { Agent, request } from 'node:https'
import {
  createSecureContext,
  getCACertificates,
  type SecureContext,
  type TLSSocket,
} from 'node:tls'
import { performance } from 'node:perf_hooks'
import {
  assertLiteralAllowed,
  ForbiddenTargetError,
  guardedLookup,
  hostnameOf,
  isForbiddenAddress,
} from '#callbacks/target_guard'
import {
  CALLBACK_USER_AGENT,
  RESPONSE_EXCERPT_BYTES,
  callbackSettings,
  type CallbackSettings,
} from '#callbacks/settings'

export interface PostResult {
  /** HTTP 200: the only acknowledgement (spec: Delivery rules). */
  ok: boolean
  /** null when no HTTP answer arrived. */
  httpStatus: number | null
  latencyMs: number
  responseExcerpt: string | null
  error: string | null
  /** The IP the connection went to, when one was made. */
  targetAddress: string | null
  /** Retrying cannot help (refused target, unusable URL). */
  permanent: boolean
}

/**
 * Everything that depends on the settings in force, rebuilt when they change
 * (configureCallbacks): a TLS session cached while one CA list or guard
 * setting was in force must never be resumed under another.
 */
let transportCache: { settings: CallbackSettings; context: SecureContext; agent: Agent } | undefined

/** Origins whose TLS session is kept for resumption (a few KiB each). */
const CACHED_SESSIONS = 1000

/**
 * One TLS context for the process, default roots (and NODE_EXTRA_CA_CERTS)
 * plus the extra CA (passing `ca` alone would replace the roots): a context
 * built per connection made Node parse the roots again for each callback and
 * grew the worker's memory. And one agent, whose only use is its TLS session
 * cache: the next callback to an origin resumes the session (no certificate
 * chain sent nor verified again) on a new connection. It never pools sockets
 * (keepAlive false, and every request says Connection: close, as the spec
 * requires), so each callback still connects afresh through the guarded lookup.
 */
function transportFor(settings: CallbackSettings) {
  if (transportCache?.settings !== settings) {
    // The old agent is left to finish its requests: it pools no sockets, only sessions.
    const { extraCa } = settings
    transportCache = {
      settings,
      context: createSecureContext(
        extraCa ? { ca: [...getCACertificates('default'), extraCa] } : {}
      ),
      agent: new Agent({ keepAlive: false, maxCachedSessions: CACHED_SESSIONS }),
    }
  }
  return transportCache
}

function describe(error: unknown): string {
  if (error instanceof ForbiddenTargetError) return error.message
  const err = error as NodeJS.ErrnoException
  const text =
    err?.code && !err.message?.includes(err.code) ? `${err.code}: ${err.message}` : err?.message
  return String(text ?? error).slice(0, 500)
}

/**
 * POSTs `body` (exact bytes) to `target` once. Never throws: every outcome,
 * including timeouts and refused targets, comes back as a PostResult.
 * Redirects are not followed (a 3xx is a failed attempt). The connection is
 * never reused (Connection: close); only the TLS session is (see transportFor).
 */
export function postCallback(
  target: string,
  body: Buffer,
  signature: string,
  settings: CallbackSettings = callbackSettings()
): Promise<PostResult> {
  const started = performance.now()
  const elapsed = () => Math.round(performance.now() - started)
  const refuse = (error: string): Promise<PostResult> =>
    Promise.resolve({
      ok: false,
      httpStatus: null,
      latencyMs: elapsed(),
      responseExcerpt: null,
      error,
      targetAddress: null,
      permanent: true,
    })

  let url: URL
  try {
    url = new URL(target)
  } catch {
    return refuse('notify_url is not a valid URL')
  }
  if (url.protocol !== 'https:') return refuse('notify_url is not HTTPS')
  if (!settings.allowPrivateTargets) {
    try {
      assertLiteralAllowed(url)
    } catch (error) {
      return refuse(describe(error))
    }
  }

  const transport = transportFor(settings)
  return new Promise<PostResult>((resolve) => {
    let settled = false
    let httpStatus: number | null = null
    let targetAddress: string | null = null
    const chunks: Buffer[] = []
    let excerptBytes = 0

    const finish = (error: unknown, permanent = false) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      req.destroy()
      const excerpt = Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES)
      resolve({
        ok: httpStatus === 200,
        httpStatus,
        latencyMs: elapsed(),
        responseExcerpt: httpStatus === null ? null : excerpt.toString('utf8'),
        error:
          httpStatus === 200
            ? null
            : error === undefined
              ? `HTTP ${httpStatus}: only 200 acknowledges a callback`
              : describe(error),
        targetAddress,
        permanent,
      })
    }

    const req = request({
      protocol: 'https:',
      hostname: hostnameOf(url),
      port: url.port || 443,
      path: `${url.pathname}${url.search}`,
      method: 'POST',
      agent: transport.agent,
      headers: {
        'User-Agent': CALLBACK_USER_AGENT,
        'Content-Type': 'application/json',
        'Content-Length': body.length,
        'Connection': 'close',
        'X-Signature': signature,
      },
      // tls.connect's option; https.RequestOptions does not list it, https passes it on.
      ...({ secureContext: transport.context } as object),
      // The guard sits in name resolution: the socket connects only to an
      // address this lookup has checked (IP literals were checked above).
      lookup: settings.allowPrivateTargets ? undefined : guardedLookup(),
    })

    const timer = setTimeout(
      () =>
        finish(
          new Error(
            `timed out after ${settings.timeoutMs} ms${httpStatus === null ? '' : ' reading the answer'}`
          )
        ),
      settings.timeoutMs
    )

    req.on('socket', (socket) => {
      socket.once('connect', () => {
        targetAddress = socket.remoteAddress ?? null
        // Belt and braces: never talk HTTP to a forbidden peer, however it was reached.
        if (!settings.allowPrivateTargets && targetAddress && isForbiddenAddress(targetAddress)) {
          finish(new ForbiddenTargetError(url.hostname, targetAddress), true)
        }
      })
    })
    req.on('error', (error) => finish(error, error instanceof ForbiddenTargetError))
    req.on('response', (res) => {
      httpStatus = res.statusCode ?? null
      targetAddress ??= (res.socket as TLSSocket).remoteAddress ?? null
      res.on('data', (chunk: Buffer) => {
        if (excerptBytes < RESPONSE_EXCERPT_BYTES) {
          chunks.push(chunk)
          excerptBytes += chunk.length
        }
        // Enough kept: the rest of the answer is not needed.
        if (excerptBytes >= RESPONSE_EXCERPT_BYTES) finish(undefined)
      })
      res.on('end', () => finish(undefined))
      res.on('error', (error) => finish(error))
      res.on('close', () => finish(undefined))
    })
    req.end(body)
  })
}
