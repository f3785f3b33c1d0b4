import type { Secret } from '@adonisjs/core/helpers'
import { amountJson } from '#core/money'
import {
  SlipSourceFailed,
  type SlipFacts,
  type SlipOrder,
  type SlipReference,
  type SlipVerifier,
} from '#slips/verifiers/slip_verifier'
import {
  answerObject,
  ProviderClient,
  assertSameTransaction,
  bahtToSatang,
  isoDateTime,
  outcomeOfStatus,
  record,
  redact,
  settle,
  slipPayload,
  text,
  type ProviderAnswer,
  type ProviderConnection,
  type ProviderOutcome,
} from '#slips/verifiers/provider_http'

export interface EasySlipSettings extends ProviderConnection {
  /** EASYSLIP_URL: the v2 verify-bank endpoint. */
  url: string
  apiKey: Secret<string>
}

const SERVER: ProviderOutcome = { kind: 'failed', reason: 'server_error', meaning: 'server error' }
const CREDENTIALS = (meaning: string): ProviderOutcome => ({
  kind: 'failed',
  reason: 'credentials',
  meaning,
})
const QUOTA = (meaning: string): ProviderOutcome => ({ kind: 'failed', reason: 'quota', meaning })
const REJECTED = (meaning: string): ProviderOutcome => ({
  kind: 'failed',
  reason: 'rejected_request',
  meaning,
})
const NOT_FOUND: ProviderOutcome = { kind: 'not_found', meaning: 'slip not found' }

/**
 * EasySlip's error codes and what each means for the slip: API v2's
 * `error.code` (the adapter speaks v2), and API v1's `message` names, which
 * the same table reads should an answer carry them.
 */
export const EASYSLIP_CODES: Record<string, ProviderOutcome> = {
  // v2, 401 / 403
  MISSING_API_KEY: CREDENTIALS('API key missing'),
  INVALID_API_KEY: CREDENTIALS('API key invalid'),
  BRANCH_INACTIVE: CREDENTIALS('branch deactivated'),
  SERVICE_BANNED: CREDENTIALS('service banned'),
  SERVICE_DELETED: CREDENTIALS('service deleted'),
  IP_NOT_ALLOWED: CREDENTIALS('IP address not allowed'),
  QUOTA_EXCEEDED: QUOTA('quota exceeded'),
  // v2, 400
  VALIDATION_ERROR: REJECTED('request validation failed'),
  URL_PROTOCOL_NOT_ALLOWED: REJECTED('URL protocol not allowed'),
  URL_INVALID_IP_RANGE: REJECTED('URL points to a restricted address'),
  IMAGE_URL_UNREACHABLE: REJECTED('image URL unreachable'),
  IMAGE_SIZE_TOO_LARGE: REJECTED('image too large'),
  INVALID_IMAGE_TYPE: REJECTED('not an image'),
  INVALID_IMAGE_FORMAT: REJECTED('image format invalid'),
  // v2, 404: the slip; NOT_FOUND is a wrong endpoint, not a missing slip.
  SLIP_NOT_FOUND: NOT_FOUND,
  NOT_FOUND: REJECTED('endpoint not found (check EASYSLIP_URL)'),
  // v2, 500
  API_SERVER_ERROR: SERVER,
  INTERNAL_SERVER_ERROR: SERVER,
  // v1 names
  invalid_payload: REJECTED('invalid payload'),
  invalid_image: REJECTED('invalid image'),
  image_size_too_large: REJECTED('image too large'),
  unauthorized: CREDENTIALS('unauthorized'),
  access_denied: CREDENTIALS('access denied'),
  account_not_verified: CREDENTIALS('account not verified'),
  application_deactivated: CREDENTIALS('application deactivated'),
  application_expired: QUOTA('application expired'),
  quota_exceeded: QUOTA('quota exceeded'),
  slip_not_found: NOT_FOUND,
  qrcode_not_found: { kind: 'not_found', meaning: 'QR code not found' },
  duplicate_slip: { kind: 'refused', reason: 'repeated', meaning: 'duplicate slip' },
  server_error: SERVER,
  api_server_error: SERVER,
}

/**
 * EasySlip (easyslip.com), API v2: `POST /v2/verify/bank` with
 * `Authorization: Bearer <key>`, the slip's QR text as `payload`, the
 * order's amount as `matchAmount`, `matchAccount: true` and
 * `checkDuplicate: true`. The answer's `rawSlip` gives the facts and
 * `isDuplicate` the repeated flag; `isAmountMatched` and `matchedAccount`
 * are kept as evidence only: the gateway's rules judge amount and receiver.
 */
export class EasySlipVerifier implements SlipVerifier {
  readonly name = 'easyslip'
  readonly #client: ProviderClient
  readonly #endpoint: URL
  readonly #apiKey: Secret<string>

  constructor(settings: EasySlipSettings) {
    this.#client = new ProviderClient(this.name, settings)
    this.#endpoint = new URL(settings.url)
    this.#apiKey = settings.apiKey
  }

  async lookup(slip: SlipReference, { order }: SlipOrder): Promise<SlipFacts | null> {
    const answer = await this.#client.postJson(
      this.#endpoint,
      { Authorization: `Bearer ${this.#apiKey.release()}` },
      {
        payload: slipPayload(this.name, slip),
        matchAmount: amountJson(order.transferAmount),
        matchAccount: true,
        checkDuplicate: true,
      },
      [this.#apiKey]
    )
    return readEasySlipAnswer(answer, slip, [this.#apiKey])
  }
}

/** EasySlip's answer as the gateway's outcome (exported for the unit tests). */
export function readEasySlipAnswer(
  answer: ProviderAnswer,
  slip: SlipReference,
  secrets: Array<Secret<string>> = []
): SlipFacts | null {
  const source = 'easyslip'
  const body = answerObject(answer, source)
  const data = record(body.data)
  if (answer.status === 200 && body.success === true) {
    const rawSlip = record(data?.rawSlip)
    const facts = rawSlip && easySlipFacts(rawSlip, slip, data!)
    if (!facts) {
      throw new SlipSourceFailed(source, 'bad_answer', 'success without a readable rawSlip', 200)
    }
    return facts
  }
  // v2: { success: false, error: { code, message } }; v1: { status, message, data? }.
  const error = record(body.error)
  const code = text(error?.code) ?? text(body.message)
  const outcome =
    (code !== null ? EASYSLIP_CODES[code] : undefined) ?? outcomeOfStatus(answer.status)
  const message = text(error?.message)
  const slipData = record(data?.rawSlip) ?? data
  return settle(
    source,
    outcome,
    { status: answer.status, code, message: message && redact(message, secrets) },
    slipData ? easySlipFacts(slipData, slip, data ?? {}) : null
  )
}

/** The slip's fields (v2 `rawSlip`) as facts; null when it lacks the amount or the transRef. */
function easySlipFacts(
  rawSlip: Record<string, any>,
  slip: SlipReference,
  data: Record<string, any>
): SlipFacts | null {
  const amount = bahtToSatang(record(rawSlip.amount)?.amount ?? data.amountInSlip)
  const transRef = text(rawSlip.transRef)
  if (amount === null || transRef === null) return null
  assertSameTransaction('easyslip', slip, transRef)
  const account = record(record(rawSlip.receiver)?.account)
  const matched = record(data.matchedAccount)
  return {
    amount,
    receiver: {
      account: text(record(account?.bank)?.account),
      proxy: text(record(account?.proxy)?.account),
    },
    transferredAt: isoDateTime(rawSlip.date),
    reference1: text(rawSlip.ref1),
    source: 'easyslip',
    evidence: {
      trans_ref: transRef,
      sending_bank: text(record(record(rawSlip.sender)?.bank)?.id),
      receiving_bank: text(record(record(rawSlip.receiver)?.bank)?.id),
      is_duplicate: data.isDuplicate === true,
      ...(typeof data.isAmountMatched === 'boolean'
        ? { is_amount_matched: data.isAmountMatched }
        : {}),
      matched_account: matched ? text(matched.bankNumber) : null,
    },
    claimedBy: null,
    repeated: data.isDuplicate === true,
  }
}
