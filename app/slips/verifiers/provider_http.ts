import { request } from 'node:https'
import { createSecureContext, getCACertificates, type SecureContext } from 'node:tls'
import { DateTime } from 'luxon'
import type { Secret } from '@adonisjs/core/helpers'
import { parseAmount } from '#core/money'
import { GATEWAY_ZONE } from '#core/clock'
import { buildSlipMiniQr } from '#slips/mini_qr'
import {
  SlipDelayed,
  SlipRefused,
  SlipSourceFailed,
  type SlipFacts,
  type SlipRefusalReason,
  type SlipReference,
  type SourceFailure,
} from '#slips/verifiers/slip_verifier'

/**
 * What the slip-verification provider adapters (SlipOK, EasySlip) share: one
 * HTTPS POST with a time limit and an optional extra CA, the reading of
 * their amounts and times, and the step from a provider's answer code to the
 * gateway's outcome. docs/slips.md lists every code and its outcome.
 */

/** How to reach a provider. */
export interface ProviderConnection {
  /** Per-request limit: connect, TLS, request and the whole answer. */
  timeoutMs: number
  /**
   * PEM certificate(s) trusted in addition to the default roots (a test
   * server, a proxy's CA). Certificates are always verified.
   */
  ca?: string
}

export interface ProviderAnswer {
  status: number
  /** The parsed body; undefined when it was not JSON. */
  json: unknown
}

/** The longest answer read; a provider's slip answer is a few KiB. */
const MAX_ANSWER_BYTES = 256 * 1024

const REDACTED = '[redacted]'

/** `text` without any of the secrets in it: error messages may be logged and stored. */
export function redact(message: string, secrets: Array<Secret<string> | string>) {
  let result = message
  for (const secret of secrets) {
    const value = typeof secret === 'string' ? secret : secret.release()
    if (value) result = result.split(value).join(REDACTED)
  }
  return result
}

/**
 * POSTs JSON to a provider over HTTPS and reads its answer. Never follows a
 * redirect, never disables certificate checks; a failure to get a complete
 * answer in time is a `SlipSourceFailed` (timeout or unreachable). `secrets`
 * are removed from any message.
 */
export class ProviderClient {
  readonly #context: SecureContext

  constructor(
    readonly source: string,
    readonly connection: ProviderConnection
  ) {
    // One context per adapter: the default roots plus the extra CA (passing
    // `ca` alone would replace the roots).
    this.#context = createSecureContext(
      connection.ca ? { ca: [...getCACertificates('default'), connection.ca] } : {}
    )
  }

  postJson(
    url: URL,
    headers: Record<string, string>,
    body: unknown,
    secrets: Array<Secret<string>>
  ): Promise<ProviderAnswer> {
    const payload = Buffer.from(JSON.stringify(body))
    const { timeoutMs } = this.connection
    const fail = (reason: SourceFailure, message: string) =>
      new SlipSourceFailed(this.source, reason, redact(message, secrets))
    if (url.protocol !== 'https:') {
      return Promise.reject(fail('rejected_request', 'the provider URL must be https'))
    }
    return new Promise<ProviderAnswer>((resolve, reject) => {
      let settled = false
      const finish = (error: SlipSourceFailed | null, answer?: ProviderAnswer) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        req.destroy()
        if (error) reject(error)
        else resolve(answer!)
      }
      const req = request({
        protocol: 'https:',
        hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
        port: url.port || 443,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        agent: false,
        headers: {
          ...headers,
          'Accept': 'application/json',
          'Content-Type': 'application/json',
          'Content-Length': String(payload.length),
          'Connection': 'close',
        },
        // tls.connect's option; https.RequestOptions does not list it, https passes it on.
        ...({ secureContext: this.#context } as object),
      })
      const timer = setTimeout(
        () => finish(fail('timeout', `no answer within ${timeoutMs} ms`)),
        timeoutMs
      )
      req.on('error', (error: NodeJS.ErrnoException) => {
        const code = error.code && !error.message.includes(error.code) ? `${error.code}: ` : ''
        finish(fail('unreachable', `${code}${error.message}`))
      })
      req.on('response', (res) => {
        const status = res.statusCode ?? 0
        const chunks: Buffer[] = []
        let size = 0
        res.on('data', (chunk: Buffer) => {
          size += chunk.length
          if (size > MAX_ANSWER_BYTES) {
            finish(
              fail('bad_answer', `HTTP ${status}: answer longer than ${MAX_ANSWER_BYTES} bytes`)
            )
            return
          }
          chunks.push(chunk)
        })
        res.on('end', () => {
          let json: unknown
          try {
            json = JSON.parse(Buffer.concat(chunks).toString('utf8'))
          } catch {
            json = undefined
          }
          finish(null, { status, json })
        })
        res.on('error', (error) => finish(fail('unreachable', error.message)))
        res.on('close', () => {
          if (!res.complete) finish(fail('unreachable', `HTTP ${status}: answer cut short`))
        })
      })
      req.end(payload)
    })
  }
}

/** The QR text a provider takes: the image's own, else the bank mini-QR rebuilt from its fields. */
export function slipPayload(source: string, slip: SlipReference): string {
  if (slip.qrText) return slip.qrText
  try {
    return buildSlipMiniQr(slip.sendingBank, slip.transRef)
  } catch (error) {
    throw new SlipSourceFailed(
      source,
      'rejected_request',
      `no QR text to send: ${(error as Error).message}`
    )
  }
}

/** Baht as a provider writes it (a JSON number or a decimal string) in satang; null if it is not an amount. */
export function bahtToSatang(value: unknown): number | null {
  return parseAmount(value)
}

/** `yyyyMMdd` and `HH:mm:ss` (or `HH:mm`) read as Bangkok time (GMT+7). */
export function bangkokDateTime(date: unknown, time: unknown): DateTime | null {
  if (typeof date !== 'string' || typeof time !== 'string') return null
  const format = /^\d{2}:\d{2}$/.test(time) ? 'yyyyMMdd HH:mm' : 'yyyyMMdd HH:mm:ss'
  const at = DateTime.fromFormat(`${date} ${time}`, format, { zone: GATEWAY_ZONE })
  return at.isValid ? at : null
}

/** An ISO 8601 time in GMT+7; one without an offset is taken as Bangkok time. */
export function isoDateTime(value: unknown): DateTime | null {
  if (typeof value !== 'string' || !value) return null
  const at = DateTime.fromISO(value, { zone: GATEWAY_ZONE })
  return at.isValid ? at : null
}

/** A provider's text field: empty strings and non-strings are absent. */
export function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : null
}

export function record(value: unknown): Record<string, any> | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, any>)
    : null
}

/** A provider's answer body as a JSON object; anything else is the provider failing to answer. */
export function answerObject(answer: ProviderAnswer, source: string): Record<string, any> {
  const body = record(answer.json)
  if (!body) {
    throw new SlipSourceFailed(
      source,
      answer.status >= 500 ? 'server_error' : 'bad_answer',
      `HTTP ${answer.status}: the answer is not a JSON object`,
      answer.status
    )
  }
  return body
}

/** What a provider's answer code means for the slip. */
export type ProviderOutcome =
  | { kind: 'failed'; reason: SourceFailure; meaning: string }
  | { kind: 'delayed'; meaning: string }
  | { kind: 'not_found'; meaning: string }
  | { kind: 'refused'; reason: SlipRefusalReason; meaning: string }

/** What an unknown code or an answer without a code means, by its HTTP status. */
export function outcomeOfStatus(status: number): ProviderOutcome {
  if (status >= 500) return { kind: 'failed', reason: 'server_error', meaning: 'server error' }
  if (status === 401 || status === 403) {
    return { kind: 'failed', reason: 'credentials', meaning: 'access refused' }
  }
  if (status === 429) return { kind: 'failed', reason: 'quota', meaning: 'too many requests' }
  return { kind: 'failed', reason: 'bad_answer', meaning: 'unexpected answer' }
}

/**
 * Ends a lookup the way `outcome` says. `facts` are the transaction's facts
 * when the answer carried them (a repeated slip, a wrong amount or receiver
 * with its data): they are returned, and the rules judge them as any
 * source's. Without facts, a refusal is a `SlipRefused`.
 */
export function settle(
  source: string,
  outcome: ProviderOutcome,
  detail: { status: number; code: string | null; message: string | null },
  facts: SlipFacts | null,
  evidence: Record<string, unknown> = {}
): SlipFacts | null {
  const said = `HTTP ${detail.status}${detail.code === null ? '' : `, ${detail.code}`}: ${outcome.meaning}${detail.message ? ` (${detail.message.slice(0, 200)})` : ''}`
  switch (outcome.kind) {
    case 'not_found':
      return null
    case 'delayed':
      throw new SlipDelayed(source, said, { code: detail.code, ...evidence })
    case 'refused':
      if (facts) {
        return {
          ...facts,
          repeated: facts.repeated || outcome.reason === 'repeated',
          evidence: { ...facts.evidence, code: detail.code, refusal: outcome.reason },
        }
      }
      throw new SlipRefused(source, outcome.reason, said, { code: detail.code, ...evidence })
    case 'failed':
      throw new SlipSourceFailed(source, outcome.reason, said, detail.status, detail.code)
  }
}

/**
 * The facts must be about the slip asked for: an answer naming another
 * transaction is not believed.
 */
export function assertSameTransaction(source: string, slip: SlipReference, transRef: string) {
  if (transRef !== slip.transRef) {
    throw new SlipSourceFailed(
      source,
      'bad_answer',
      `the answer names transaction ${transRef.slice(0, 40)}, not ${slip.transRef}`
    )
  }
}
