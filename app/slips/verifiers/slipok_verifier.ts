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
  bangkokDateTime,
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

export interface SlipOkSettings extends ProviderConnection {
  /** SLIPOK_URL: the check-slip endpoint without the branch id. */
  url: string
  branchId: string
  apiKey: Secret<string>
}

/**
 * SlipOK's error codes (its API documentation, "Check Slip") and what each
 * means for the slip. Codes 1012–1014 may carry the transaction in `data`:
 * then its facts are judged by the gateway's rules like any source's.
 */
export const SLIPOK_CODES: Record<number, ProviderOutcome> = {
  1000: { kind: 'failed', reason: 'rejected_request', meaning: 'required fields missing' },
  1001: { kind: 'failed', reason: 'credentials', meaning: 'branch not found' },
  1002: { kind: 'failed', reason: 'credentials', meaning: 'x-authorization refused' },
  1003: { kind: 'failed', reason: 'quota', meaning: 'package expired' },
  1004: { kind: 'failed', reason: 'quota', meaning: 'quota exceeded' },
  1005: { kind: 'failed', reason: 'rejected_request', meaning: 'not an image file' },
  1006: { kind: 'failed', reason: 'rejected_request', meaning: 'image incorrect' },
  1007: { kind: 'failed', reason: 'rejected_request', meaning: 'no QR code in the image' },
  1008: { kind: 'failed', reason: 'rejected_request', meaning: 'the QR is not a payment QR' },
  1009: { kind: 'failed', reason: 'server_error', meaning: 'bank server temporarily unavailable' },
  1010: { kind: 'delayed', meaning: 'delayed slip: the bank has not recorded it yet' },
  1011: { kind: 'not_found', meaning: 'QR expired or no such transaction' },
  1012: { kind: 'refused', reason: 'repeated', meaning: 'repeated slip' },
  1013: { kind: 'refused', reason: 'amount_mismatch', meaning: 'amount does not match' },
  1014: {
    kind: 'refused',
    reason: 'receiver_mismatch',
    meaning: 'receiver account does not match',
  },
}

/**
 * SlipOK (slipok.com): `POST <SLIPOK_URL>/<branch id>` with header
 * `x-authorization`, the slip's QR text as `data`, the order's amount in
 * baht as `amount` (SlipOK answers 1013 when it differs) and `log: true`
 * (SlipOK remembers the slip: a second check of it answers 1012). The
 * receiver SlipOK compares (1014) is the account registered for the branch.
 * The verdict is never SlipOK's: its facts go through the gateway's rules.
 */
export class SlipOkVerifier implements SlipVerifier {
  readonly name = 'slipok'
  readonly #client: ProviderClient
  readonly #endpoint: URL
  readonly #apiKey: Secret<string>

  constructor(settings: SlipOkSettings) {
    this.#client = new ProviderClient(this.name, settings)
    this.#endpoint = new URL(
      `${settings.url.replace(/\/+$/, '')}/${encodeURIComponent(settings.branchId)}`
    )
    this.#apiKey = settings.apiKey
  }

  async lookup(slip: SlipReference, { order }: SlipOrder): Promise<SlipFacts | null> {
    const answer = await this.#client.postJson(
      this.#endpoint,
      { 'x-authorization': this.#apiKey.release() },
      { data: slipPayload(this.name, slip), amount: amountJson(order.transferAmount), log: true },
      [this.#apiKey]
    )
    return readSlipOkAnswer(answer, slip, [this.#apiKey])
  }
}

/** SlipOK's answer as the gateway's outcome (exported for the unit tests). */
export function readSlipOkAnswer(
  answer: ProviderAnswer,
  slip: SlipReference,
  secrets: Array<Secret<string>> = []
): SlipFacts | null {
  const source = 'slipok'
  const body = answerObject(answer, source)
  const data = record(body.data)
  // Only HTTP 200 with success: true is an answer about the slip.
  if (answer.status === 200 && body.success === true) {
    if (!data || data.success === false) {
      throw new SlipSourceFailed(source, 'bad_answer', 'success without a valid slip', 200)
    }
    const facts = slipOkFacts(data, slip)
    if (!facts) {
      throw new SlipSourceFailed(source, 'bad_answer', 'success without amount or transRef', 200)
    }
    return facts
  }
  const code = Number.isInteger(body.code) ? (body.code as number) : null
  const outcome = (code !== null ? SLIPOK_CODES[code] : undefined) ?? outcomeOfStatus(answer.status)
  const message = text(body.message)
  return settle(
    source,
    outcome,
    {
      status: answer.status,
      code: code === null ? null : String(code),
      message: message && redact(message, secrets),
    },
    data ? slipOkFacts(data, slip) : null,
    code === 1010 && data
      ? { bank_code: text(data.bankCode), bank_name: text(data.bankName), delay: data.delay }
      : {}
  )
}

/** SlipOK's `data` as facts; null when it lacks the amount or the transRef. */
function slipOkFacts(data: Record<string, any>, slip: SlipReference): SlipFacts | null {
  const amount = bahtToSatang(data.amount)
  const transRef = text(data.transRef)
  if (amount === null || transRef === null) return null
  assertSameTransaction('slipok', slip, transRef)
  const receiver = record(data.receiver)
  return {
    amount,
    receiver: {
      account: text(record(receiver?.account)?.value),
      proxy: text(record(receiver?.proxy)?.value),
    },
    // The slip's own date and time are Bangkok time; transTimestamp is the same instant in UTC.
    transferredAt:
      bangkokDateTime(data.transDate, data.transTime) ?? isoDateTime(data.transTimestamp),
    reference1: text(data.ref1),
    source: 'slipok',
    evidence: {
      trans_ref: transRef,
      rq_uid: text(data.rqUID),
      sending_bank: text(data.sendingBank),
      receiving_bank: text(data.receivingBank),
      trans_timestamp: text(data.transTimestamp),
    },
    claimedBy: null,
  }
}
