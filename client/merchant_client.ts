import { Agent } from 'node:https'
import { amountText } from './amount.ts'
import { signBody } from './signing.ts'
import {
  GatewayApiError,
  GatewayNetworkError,
  UnexpectedResponseError,
  type MerchantClientError,
} from './errors.ts'
import {
  backoffDelayMs,
  parseRetryAfter,
  resolveRetryPolicy,
  type RetryCause,
  type RetryEvent,
  type RetryPolicy,
} from './retry.ts'
import { AttemptFailure, postOnce, type Answer } from './transport.ts'
import type {
  BalanceData,
  EndpointData,
  EndpointInput,
  EndpointPath,
  FlexPaymentData,
  OrderQueryInput,
  PaymentCreateInput,
  PaymentQueryData,
  QrPaymentData,
  SettlementCreateInput,
  SettlementCreatedData,
  SettlementQueryData,
  SlipUploadData,
  SlipUploadInput,
  TransferPaymentData,
  WithdrawCreateInput,
  WithdrawCreatedData,
  WithdrawQueryData,
} from './types.ts'

export interface MerchantClientOptions {
  /** The gateway's HTTPS base address, e.g. `https://api.example.com` (plain HTTP is refused). */
  baseUrl: string
  merchantId: string
  /** The API token, sent in the body of every request. */
  token: string
  /** The HMAC-SHA256 key: signs requests and verifies callbacks. Server side only. */
  secret: string
  /** Per attempt, for the whole exchange. Default 30,000. */
  timeoutMs?: number
  /** A number of retries with the default policy, or a policy (see retry.ts). Default: 2 retries. */
  retries?: number | Partial<RetryPolicy>
  /** An https.Agent of your own (connection pooling, proxies, TLS settings). */
  agent?: Agent
  /** Certificate authorities to trust instead of the system's, e.g. a development certificate. */
  ca?: string | Buffer | Array<string | Buffer>
  /** false accepts any certificate: development only. Default true. */
  rejectUnauthorized?: boolean
  /** Called before each retry. */
  onRetry?: (event: RetryEvent) => void
  /** Epoch milliseconds; the source of `time`. Default Date.now. */
  clock?: () => number
  /** User-Agent header. */
  userAgent?: string
}

export interface CallOptions {
  /** Cancels the call, its waits and its retries (a GatewayNetworkError `aborted`). */
  signal?: AbortSignal
}

/**
 * A request serialised and signed once. Sending it again (after a lost
 * answer, even from another process while `time` is within the gateway's
 * tolerance) gets the answer the first one got. It holds the token: keep it
 * as you keep credentials.
 */
export interface PreparedRequest<P extends EndpointPath = EndpointPath> {
  endpoint: P
  /** The exact bytes sent. */
  body: Buffer
  /** X-SIGNATURE: lowercase hex HMAC-SHA256 of `body`. */
  signature: string
  /** The body's `time`: epoch seconds. */
  time: number
  /** Epoch milliseconds when it was signed (the client's clock). */
  signedAt: number
}

export interface ApiSuccess<T> {
  data: T
  message: string
  /** How many times the request was sent. */
  attempts: number
  /** The request's X-SIGNATURE (the gateway's key for "the same request"). */
  signature: string
}

const RESERVED_FIELDS = ['merchant_id', 'token', 'time']
const MAX_ANSWER_BYTES = 4 * 1024 * 1024
const DEFAULT_USER_AGENT = 'thb-gateway-merchant-client/1.0'

/** 503 data.code values that are platform state: waiting does not help. */
const PLATFORM_GATES = new Set(['killswitch_off', 'outside_open_period'])

/**
 * A typed client of the merchant API (Merchant API 1.0). One method per
 * endpoint; each builds the body once (merchant_id, token, time, then the
 * endpoint's fields), signs those bytes, and sends them, the same bytes on
 * every retry. Success data is returned; anything else is thrown as a
 * GatewayApiError, GatewayNetworkError or UnexpectedResponseError.
 */
export class MerchantClient {
  readonly baseUrl: URL
  readonly merchantId: string
  readonly timeoutMs: number
  readonly retryPolicy: Readonly<RetryPolicy>
  #token: string
  #secret: string
  #agent: Agent
  #ownAgent: boolean
  #ca: MerchantClientOptions['ca']
  #rejectUnauthorized: boolean | undefined
  #onRetry: MerchantClientOptions['onRetry']
  #clock: () => number
  #userAgent: string

  constructor(options: MerchantClientOptions) {
    const baseUrl = new URL(options.baseUrl)
    if (baseUrl.protocol !== 'https:') {
      throw new TypeError(
        `baseUrl must be https:// (the gateway refuses plain HTTP): ${options.baseUrl}`
      )
    }
    if (!baseUrl.pathname.endsWith('/')) baseUrl.pathname += '/'
    for (const name of ['merchantId', 'token', 'secret'] as const) {
      if (typeof options[name] !== 'string' || options[name] === '') {
        throw new TypeError(`${name} is required`)
      }
    }
    this.baseUrl = baseUrl
    this.merchantId = options.merchantId
    this.#token = options.token
    this.#secret = options.secret
    this.timeoutMs = options.timeoutMs ?? 30_000
    if (!(this.timeoutMs > 0)) throw new RangeError('timeoutMs must be positive')
    this.retryPolicy = Object.freeze(resolveRetryPolicy(options.retries))
    this.#ca = options.ca
    this.#rejectUnauthorized = options.rejectUnauthorized
    this.#ownAgent = options.agent === undefined
    this.#agent =
      options.agent ??
      new Agent({ keepAlive: true, ca: options.ca, rejectUnauthorized: options.rejectUnauthorized })
    this.#onRetry = options.onRetry
    this.#clock = options.clock ?? Date.now
    this.#userAgent = options.userAgent ?? DEFAULT_USER_AGENT
  }

  // ------------------------------------------------------------ endpoints

  /** POST /balance: balance, freeze_balance, unsettle_balance. */
  async balance(options?: CallOptions): Promise<BalanceData> {
    return (await this.call('/balance', {}, options)).data
  }

  /** POST /payment/create: a QR deposit. */
  async paymentCreate(input: PaymentCreateInput, options?: CallOptions): Promise<QrPaymentData> {
    return (await this.call('/payment/create', input, options)).data
  }

  /** POST /payment/create-transfer: bank-transfer instructions. */
  async paymentCreateTransfer(
    input: PaymentCreateInput,
    options?: CallOptions
  ): Promise<TransferPaymentData> {
    return (await this.call('/payment/create-transfer', input, options)).data
  }

  /** POST /payment/create-flex: the gateway picks the channel; redirect to payment_url. */
  async paymentCreateFlex(
    input: PaymentCreateInput,
    options?: CallOptions
  ): Promise<FlexPaymentData> {
    return (await this.call('/payment/create-flex', input, options)).data
  }

  /** POST /payment/query. */
  async paymentQuery(input: OrderQueryInput, options?: CallOptions): Promise<PaymentQueryData> {
    return (await this.call('/payment/query', input, options)).data
  }

  /** POST /withdraw/create: pays an end customer; amount + fee is held from balance. */
  async withdrawCreate(
    input: WithdrawCreateInput,
    options?: CallOptions
  ): Promise<WithdrawCreatedData> {
    return (await this.call('/withdraw/create', input, options)).data
  }

  /** POST /withdraw/query. */
  async withdrawQuery(input: OrderQueryInput, options?: CallOptions): Promise<WithdrawQueryData> {
    return (await this.call('/withdraw/query', input, options)).data
  }

  /** POST /thb-settlement/create: moves balance to the merchant's own bank account. */
  async settlementCreate(
    input: SettlementCreateInput,
    options?: CallOptions
  ): Promise<SettlementCreatedData> {
    return (await this.call('/thb-settlement/create', input, options)).data
  }

  /** POST /thb-settlement/query. */
  async settlementQuery(
    input: OrderQueryInput,
    options?: CallOptions
  ): Promise<SettlementQueryData> {
    return (await this.call('/thb-settlement/query', input, options)).data
  }

  /** POST /slip/upload: image_base64 is plain base64 of PNG or JPG bytes (`buffer.toString('base64')`). */
  async slipUpload(input: SlipUploadInput, options?: CallOptions): Promise<SlipUploadData> {
    return (await this.call('/slip/upload', input, options)).data
  }

  // ------------------------------------------------------------ lower level

  /** prepare() then send(): the success envelope's data and message, with the attempts made. */
  call<P extends EndpointPath>(
    endpoint: P,
    input: EndpointInput<P>,
    options?: CallOptions
  ): Promise<ApiSuccess<EndpointData<P>>> {
    return this.send(this.prepare(endpoint, input), options)
  }

  /**
   * Serialises and signs a request once: `{"merchant_id":…,"token":…,"time":…}`
   * followed by the input's fields in their order, undefined ones left out,
   * `amount` as a 2-decimal string. Throws a TypeError or RangeError for an
   * input that cannot be sent (an amount with 3 decimals, a reserved field).
   */
  prepare<P extends EndpointPath>(endpoint: P, input: EndpointInput<P>): PreparedRequest<P> {
    const fields: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(input as Record<string, unknown>)) {
      if (value === undefined) continue
      if (RESERVED_FIELDS.includes(key)) {
        throw new TypeError(`${key} is set by the client; leave it out of the input`)
      }
      fields[key] = key === 'amount' ? amountText(value as number | string) : value
    }
    const signedAt = this.#clock()
    const time = Math.floor(signedAt / 1000)
    const body = Buffer.from(
      JSON.stringify({ merchant_id: this.merchantId, token: this.#token, time, ...fields }),
      'utf8'
    )
    return { endpoint, body, signature: signBody(this.#secret, body), time, signedAt }
  }

  /**
   * Sends a prepared request, retrying as the policy says with the same bytes
   * and signature. Can be called again with the same prepared request (e.g.
   * after a GatewayNetworkError) to learn what the first sending did.
   */
  async send<P extends EndpointPath>(
    prepared: PreparedRequest<P>,
    options: CallOptions = {}
  ): Promise<ApiSuccess<EndpointData<P>>> {
    const url = new URL(prepared.endpoint.slice(1), this.baseUrl)
    const headers = {
      'Content-Type': 'application/json',
      'Accept': 'application/json',
      'User-Agent': this.#userAgent,
      'X-SIGNATURE': prepared.signature,
    }
    const policy = this.retryPolicy
    for (let attempt = 1; ; attempt++) {
      let outcome: { answer: Answer } | { failure: AttemptFailure }
      try {
        outcome = {
          answer: await postOnce(url, prepared.body, headers, {
            agent: this.#agent,
            ca: this.#ca,
            rejectUnauthorized: this.#rejectUnauthorized,
            timeoutMs: this.timeoutMs,
            maxAnswerBytes: MAX_ANSWER_BYTES,
            signal: options.signal,
          }),
        }
      } catch (error) {
        if (!(error instanceof AttemptFailure)) throw error
        outcome = { failure: error }
      }

      if ('answer' in outcome) {
        const result = interpret<EndpointData<P>>(outcome.answer, prepared, attempt)
        if (!(result instanceof Error)) return result
        const retry = this.#retryAfterAnswer(result, outcome.answer, policy)
        if (!retry || !(await this.#beforeRetry(prepared, attempt, retry, options))) throw result
        continue
      }
      // No answer.
      const failure = outcome.failure
      const error = new GatewayNetworkError({
        endpoint: prepared.endpoint,
        attempts: attempt,
        failure: failure.failure,
        code: failure.code,
        message: `${prepared.endpoint}: ${failure.message}`,
        cause: failure.cause ?? failure,
      })
      const cause = failure.failure as RetryCause
      const retry = policy.retryOn.includes(cause)
        ? { cause, delayMs: backoffDelayMs(policy, attempt) }
        : undefined
      if (!retry || !(await this.#beforeRetry(prepared, attempt, retry, options))) throw error
    }
  }

  /** Closes the client's own keep-alive connections (not those of an agent passed in). */
  close() {
    if (this.#ownAgent) this.#agent.destroy()
  }

  /** Whether an answer is retried, and after how long. */
  #retryAfterAnswer(
    error: MerchantClientError,
    answer: Answer,
    policy: RetryPolicy
  ): { cause: RetryCause; delayMs: number } | undefined {
    const retryAfter = parseRetryAfter(answer.headers['retry-after'])
    if (retryAfter === undefined || retryAfter * 1000 > policy.maxRetryAfterMs) return undefined
    let cause: RetryCause | undefined
    if (answer.status === 503) {
      const gate = error instanceof GatewayApiError ? error.data?.code : undefined
      if (typeof gate === 'string' && PLATFORM_GATES.has(gate)) return undefined
      cause = 'service-unavailable'
    } else if (
      answer.status === 429 &&
      error instanceof GatewayApiError &&
      error.error === 'too-many-requests'
    ) {
      cause = 'too-many-requests'
    }
    if (!cause || !policy.retryOn.includes(cause)) return undefined
    return { cause, delayMs: retryAfter * 1000 }
  }

  /**
   * Waits before a retry; false when no retry may start (count, window).
   * Throws GatewayNetworkError `aborted` when the signal aborts the wait.
   */
  async #beforeRetry(
    prepared: PreparedRequest,
    attempt: number,
    retry: { cause: RetryCause; delayMs: number },
    options: CallOptions
  ): Promise<boolean> {
    const policy = this.retryPolicy
    if (attempt > policy.retries) return false
    if (this.#clock() + retry.delayMs - prepared.signedAt > policy.windowMs) return false
    this.#onRetry?.({
      endpoint: prepared.endpoint,
      attempt,
      cause: retry.cause,
      delayMs: retry.delayMs,
      signature: prepared.signature,
    })
    if (await sleep(retry.delayMs, options.signal)) return true
    throw new GatewayNetworkError({
      endpoint: prepared.endpoint,
      attempts: attempt,
      failure: 'aborted',
      message: `${prepared.endpoint}: the call was aborted while waiting to retry`,
      cause: options.signal?.reason,
    })
  }
}

/** The success, or the error an answer is. */
function interpret<T>(
  answer: Answer,
  prepared: PreparedRequest,
  attempts: number
): ApiSuccess<T> | GatewayApiError | UnexpectedResponseError {
  const text = answer.body.toString('utf8')
  let envelope: any
  try {
    envelope = JSON.parse(text)
  } catch {}
  const isObject = (value: unknown) =>
    typeof value === 'object' && value !== null && !Array.isArray(value)

  if (
    answer.status === 200 &&
    isObject(envelope) &&
    envelope.success === true &&
    isObject(envelope.data)
  ) {
    return {
      data: envelope.data as T,
      message: typeof envelope.message === 'string' ? envelope.message : '',
      attempts,
      signature: prepared.signature,
    }
  }
  if (
    answer.status !== 200 &&
    isObject(envelope) &&
    envelope.success === false &&
    typeof envelope.error === 'string'
  ) {
    return new GatewayApiError({
      endpoint: prepared.endpoint,
      attempts,
      status: answer.status,
      code: typeof envelope.code === 'number' ? envelope.code : answer.status,
      error: envelope.error,
      message: typeof envelope.message === 'string' ? envelope.message : envelope.error,
      data: isObject(envelope.data) ? envelope.data : undefined,
      retryAfterSeconds: parseRetryAfter(answer.headers['retry-after']),
    })
  }
  return new UnexpectedResponseError({
    endpoint: prepared.endpoint,
    attempts,
    status: answer.status,
    bodyExcerpt: text.slice(0, 500),
    message: `${prepared.endpoint}: HTTP ${answer.status} without the API's envelope`,
  })
}

/** Resolves true after `ms`, false at once when the signal aborts. */
function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false)
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer)
      resolve(false)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve(true)
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
