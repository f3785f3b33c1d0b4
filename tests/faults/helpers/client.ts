import { createHmac, randomBytes } from 'node:crypto'
import { Agent, request } from 'node:https'

export interface Credentials {
  merchant_id: string
  token: string
  secret: string
}

export interface ApiResponse {
  /** HTTP status; 0 when no response arrived (connection refused, reset, timeout). */
  status: number
  json: any
  text: string
  ms: number
  /** Network error, when there was no (complete) response. */
  error?: string
  /** A response arrived but its body was cut off. */
  truncated: boolean
  startedAt: number
}

export function signature(secret: string, body: string) {
  return createHmac('sha256', secret).update(Buffer.from(body, 'utf8')).digest('hex')
}

let sequence = 0

/** A merchant_order_id no other request of the run uses (alphanumeric, at most 40). */
export function uniqueOrderId(prefix = 'F') {
  sequence++
  return `${prefix}${Date.now().toString(36)}${sequence.toString(36)}${randomBytes(3).toString('hex')}`.toUpperCase()
}

/**
 * A merchant calling the gateway over HTTPS with signed bodies: the body is
 * serialised once, signed over its bytes and sent unchanged. `time` is fresh
 * per body. Requests never throw: failures come back as status 0 with the
 * error, so that load loops can count them.
 */
export class MerchantClient {
  constructor(
    public baseUrl: string,
    readonly credentials: Credentials,
    readonly certificate: string
  ) {}

  body(fields: Record<string, unknown> = {}) {
    const { merchant_id: merchantId, token } = this.credentials
    return JSON.stringify({
      merchant_id: merchantId,
      token,
      time: Math.floor(Date.now() / 1000),
      ...fields,
    })
  }

  post(
    path: string,
    body: string,
    options: { agent?: Agent; timeoutMs?: number; baseUrl?: string } = {}
  ): Promise<ApiResponse> {
    const base = new URL(options.baseUrl ?? this.baseUrl)
    const bytes = Buffer.from(body, 'utf8')
    const startedAt = Date.now()
    return new Promise((resolve) => {
      let settled = false
      const finish = (result: Omit<ApiResponse, 'ms' | 'startedAt'>) => {
        if (settled) return
        settled = true
        resolve({ ...result, ms: Date.now() - startedAt, startedAt })
      }
      const req = request(
        {
          host: base.hostname,
          port: base.port,
          path,
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'content-length': bytes.length,
            'x-signature': signature(this.credentials.secret, body),
          },
          // No custom checkServerIdentity: Node 24's agent never reuses the
          // connection of a request that has one, and the keep-alive agent
          // would open a connection per request. The certificate names 127.0.0.1.
          ca: this.certificate,
          agent: options.agent ?? false,
          timeout: options.timeoutMs ?? 30_000,
        },
        (res) => {
          const chunks: Buffer[] = []
          res.on('data', (chunk: Buffer) => chunks.push(chunk))
          res.on('close', () => {
            const text = Buffer.concat(chunks).toString('utf8')
            let json: any
            try {
              json = JSON.parse(text)
            } catch {}
            const truncated = !res.complete
            finish({
              status: res.statusCode ?? 0,
              json,
              text,
              truncated,
              error: truncated ? 'response cut off' : undefined,
            })
          })
        }
      )
      req.on('timeout', () => req.destroy(new Error('client timeout')))
      req.on('error', (error: NodeJS.ErrnoException) =>
        finish({
          status: 0,
          json: undefined,
          text: '',
          truncated: false,
          error: error.code ?? error.message,
        })
      )
      req.end(bytes)
    })
  }

  withdrawFields(accountNo = '1234567890', amount = '20.00', notifyUrl?: string) {
    return {
      merchant_order_id: uniqueOrderId('W'),
      amount,
      bank: 'KBANK',
      account_name: 'Somchai Jaidee',
      account_no: accountNo,
      ...(notifyUrl ? { notify_url: notifyUrl } : {}),
    }
  }

  paymentFields(amount = '100.00', notifyUrl?: string) {
    return {
      merchant_order_id: uniqueOrderId('P'),
      amount,
      bank: 'SCB',
      account_name: 'Somsri Jaidee',
      account_no: '9876543210',
      ...(notifyUrl ? { notify_url: notifyUrl } : {}),
    }
  }
}

/** Whether `response` is the spec's error envelope with this status and identifier. */
export function isErrorEnvelope(response: ApiResponse, status?: number, error?: string) {
  const json = response.json
  return (
    !!json &&
    json.success === false &&
    typeof json.error === 'string' &&
    json.code === response.status &&
    typeof json.message === 'string' &&
    (status === undefined || response.status === status) &&
    (error === undefined || json.error === error)
  )
}

export function isSuccess(response: ApiResponse) {
  return response.status === 200 && response.json?.success === true
}

/** A keep-alive agent, as a merchant's HTTP client pool would use. */
export function keepAliveAgent(maxSockets = 20) {
  return new Agent({ keepAlive: true, maxSockets })
}
