import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import sharp from 'sharp'
import {
  MerchantClient,
  isErrorEnvelope,
  keepAliveAgent,
  uniqueOrderId,
} from '#tests/faults/helpers/client'
import type { ApiResponse } from '#tests/faults/helpers/client'
import { sleep } from '#tests/faults/helpers/processes'
import { lastJson, type Target } from '#tests/cluster_faults/helpers/target'
import type { BankMerchant } from '#tests/cluster_faults/helpers/bank'

export type OperationKind = 'payment' | 'withdraw' | 'settlement' | 'slip'

/**
 * How one request attempt ended, from the merchant's side:
 * - ok: the gateway answered success;
 * - refused: the spec's 503 service-unavailable envelope (retry with backoff);
 * - unanswered: no (complete) answer: connection refused or reset, timeout,
 *   body cut off. The merchant retries with the same idempotency key
 *   (merchant_order_id; for withdrawals bank + account_no + amount, unique per
 *   request with the 3-minute duplicate rule on): safe, and checked at the
 *   end (exactly one order per key);
 * - duplicate: 409 duplicate-entry (429 for a slip) answering the retry of
 *   an unanswered or refused attempt: the first attempt was done, its answer
 *   lost (the merchant then queries the order, as the spec says for 409);
 * - failed: anything else (500, a 4xx the request did not deserve...).
 */
export type AttemptClass = 'ok' | 'refused' | 'unanswered' | 'duplicate' | 'failed'

export interface Attempt {
  kind: OperationKind
  startedAt: number
  endedAt: number
  status: number
  class: AttemptClass
  detail: string
}

/** A create the gateway answered 200: what it answered, to compare with the database at the end. */
export interface Answered {
  kind: Exclude<OperationKind, 'slip'>
  merchant: BankMerchant
  fields: Record<string, unknown>
  data: any
}

/** An operation whose answer was lost but whose retry says it was done (409 after no answer). */
export interface AnswerLost {
  kind: OperationKind
  merchant: BankMerchant
  fields: Record<string, unknown>
  /** What the first attempt got: no answer, or a 503 although the operation was done. */
  after: 'unanswered' | 'refused'
}

const WITHDRAW_ACCOUNTS = ['1234567890', '1234567891', '5550000001', '1234567892', '5550000002']
/** How long a merchant keeps retrying one operation before it gives up (a failure). */
const GIVE_UP_MS = 120_000

function classify(response: ApiResponse, retried: boolean, kind: OperationKind): AttemptClass {
  if (response.status === 200 && response.json?.success === true) return 'ok'
  // The order closed (paid, expired) before its slip: the right answer.
  if (kind === 'slip' && isErrorEnvelope(response, 403, 'permission-denied')) return 'ok'
  if (response.status === 0 || response.truncated) return 'unanswered'
  if (isErrorEnvelope(response, 503, 'service-unavailable')) return 'refused'
  if (retried && isErrorEnvelope(response, 409, 'duplicate-entry')) return 'duplicate'
  if (retried && kind === 'slip' && isErrorEnvelope(response, 429, 'too-many-requests')) {
    return 'duplicate'
  }
  return 'failed'
}

function describe(response: ApiResponse) {
  if (response.status === 0) return `no answer (${response.error})`
  const message = String(response.json?.message ?? response.text).slice(0, 100)
  return `${response.status} ${response.json?.error ?? ''} ${message}`
}

/**
 * The mixed merchant load of the topology faults: per merchant, loops of
 * payment creates, withdrawals and settlements with callbacks to the
 * receiver; slip uploads on some created payments; statement imports paying
 * the chosen payments (`statements:import`, one file per round). Every
 * attempt is kept with its times so that each fault's window can be read.
 */
export class MixedLoad {
  attempts: Attempt[] = []
  answered: Answered[] = []
  answerLost: AnswerLost[] = []
  /** Operations given up (still failing after GIVE_UP_MS). */
  givenUp: Array<{ kind: OperationKind; detail: string }> = []
  /** Satang of every distinct statement line imported (what the bank received). */
  linesImported = new Map<string, number>()
  importRounds = { ok: 0, retried: 0, failed: 0 }
  /** Slip uploads refused because the order was no longer open. */
  slipsRefused = 0
  #toPay: Array<{ platformOrderId: string; transferAmount: number }> = []
  #toSlip: Array<{ merchant: BankMerchant; platformOrderId: string }> = []
  #running = false
  #loops: Promise<void>[] = []
  #agent = keepAliveAgent(32)
  #counter = 0
  #withdrawSatang = 0
  #slipImage = ''

  constructor(
    private target: Target,
    private merchants: BankMerchant[],
    private options: { loopsPerMerchant: number; pauseMs: number; depositAccountId: number }
  ) {}

  async start() {
    this.#slipImage = (
      await sharp({
        create: { width: 240, height: 320, channels: 3, background: { r: 240, g: 244, b: 248 } },
      })
        .png()
        .toBuffer()
    ).toString('base64')
    this.#running = true
    for (const merchant of this.merchants) {
      for (let loop = 0; loop < this.options.loopsPerMerchant; loop++) {
        this.#loops.push(this.#merchantLoop(merchant))
      }
    }
    this.#loops.push(this.#slipLoop(), this.#importLoop())
    return this
  }

  async stop() {
    this.#running = false
    await Promise.all(this.#loops)
    this.#loops = []
    // A merchant loop that was still creating a payment when the slip loop had
    // drained its list may have added one after: its slip is uploaded here.
    // (Waiting for the slip loop instead waited forever: it had ended.)
    await this.#uploadSlips()
    // The last payments chosen to be paid are paid too.
    await this.#importRound()
    this.#agent.destroy()
  }

  #client(merchant: BankMerchant) {
    return new MerchantClient(this.target.webUrls[0], merchant.credentials, this.target.cert)
  }

  /**
   * One operation as a careful merchant runs it: retried with backoff on a
   * 503 or no answer, with the same fields (fresh time and signature).
   */
  async operate(
    merchant: BankMerchant,
    kind: OperationKind,
    path: string,
    fields: Record<string, unknown>
  ) {
    const client = this.#client(merchant)
    const started = Date.now()
    // What the earlier attempts of this operation left unknown: no answer, or a 503.
    let unknown: 'unanswered' | 'refused' | undefined
    let backoff = 200
    for (;;) {
      const index = this.#counter++
      const baseUrl = this.target.webUrls[index % this.target.webUrls.length]
      const response = await client.post(path, client.body(fields), {
        agent: this.#agent,
        baseUrl,
        timeoutMs: 30_000,
      })
      const attemptClass = classify(response, unknown !== undefined, kind)
      const detail = describe(response)
      if (attemptClass === 'duplicate' && unknown === 'refused') {
        // A 503 tells the merchant nothing was done; here it was. Safe only thanks to the
        // idempotency key: a failure of the answer, counted as such.
        this.answerLost.push({ kind, merchant, fields, after: unknown })
        this.attempts.push({
          kind,
          startedAt: response.startedAt,
          endedAt: response.startedAt + response.ms,
          status: response.status,
          class: 'failed',
          detail: `done although answered 503 (the retry got ${detail})`,
        })
        return { ok: false as const }
      }
      this.attempts.push({
        kind,
        startedAt: response.startedAt,
        endedAt: response.startedAt + response.ms,
        status: response.status,
        class: attemptClass,
        detail,
      })
      if (attemptClass === 'ok' && response.status === 403) this.slipsRefused++
      if (attemptClass === 'ok') return { ok: true as const, data: response.json?.data }
      if (attemptClass === 'duplicate') {
        this.answerLost.push({ kind, merchant, fields, after: 'unanswered' })
        return { ok: false as const }
      }
      if (attemptClass === 'unanswered' || attemptClass === 'refused') unknown ??= attemptClass
      // Spec: no retry of a 4xx other than the above; a 5xx is retried with backoff.
      if (attemptClass === 'failed' && response.status < 500 && response.status > 0) {
        this.givenUp.push({ kind, detail: describe(response) })
        return { ok: false as const }
      }
      if (Date.now() - started > GIVE_UP_MS) {
        this.givenUp.push({ kind, detail: describe(response) })
        return { ok: false as const }
      }
      // A failed attempt is counted, and the merchant retries it like a 5xx (spec: retry with backoff).
      await sleep(backoff)
      backoff = Math.min(backoff * 2, 2000)
    }
  }

  async #merchantLoop(merchant: BankMerchant) {
    const notifyUrl = this.target.receiver.url
    const client = this.#client(merchant)
    let step = 0
    while (this.#running) {
      step++
      if (step % 8 === 0) {
        const fields = {
          ...client.withdrawFields('1029384756', '100.00', notifyUrl),
          merchant_order_id: uniqueOrderId('M'),
        }
        const result = await this.operate(merchant, 'settlement', '/thb-settlement/create', fields)
        if (result.ok)
          this.answered.push({ kind: 'settlement', merchant, fields, data: result.data })
      } else if (step % 2 === 0) {
        // A unique amount per withdrawal: with the 3-minute duplicate rule on, a
        // retry of an unanswered create is refused (409) instead of paying twice.
        this.#withdrawSatang++
        const satang = 2000 + this.#withdrawSatang
        const amount = `${Math.floor(satang / 100)}.${String(satang % 100).padStart(2, '0')}`
        const account = WITHDRAW_ACCOUNTS[this.#withdrawSatang % WITHDRAW_ACCOUNTS.length]
        const fields = client.withdrawFields(account, amount, notifyUrl)
        const result = await this.operate(merchant, 'withdraw', '/withdraw/create', fields)
        if (result.ok) this.answered.push({ kind: 'withdraw', merchant, fields, data: result.data })
      } else {
        const fields = client.paymentFields(
          `${100 + ((step * 7 + merchant.id) % 300)}.00`,
          notifyUrl
        )
        const result = await this.operate(merchant, 'payment', '/payment/create', fields)
        if (result.ok) {
          this.answered.push({ kind: 'payment', merchant, fields, data: result.data })
          const platformOrderId = String(result.data.platform_order_id)
          // Two payments of three are paid by a statement line; every third paid one gets a slip first.
          if (step % 3 !== 0) {
            const transferAmount = Math.round(Number(result.data.transfer_amount) * 100)
            this.#toPay.push({ platformOrderId, transferAmount })
            if (step % 9 === 1) this.#toSlip.push({ merchant, platformOrderId })
          }
        }
      }
      await sleep(this.options.pauseMs)
    }
  }

  async #slipLoop() {
    while (this.#running) {
      if (this.#toSlip.length === 0) await sleep(500)
      else await this.#uploadSlips()
    }
  }

  /** Uploads the slips chosen so far, one at a time. */
  async #uploadSlips() {
    for (let next = this.#toSlip.shift(); next; next = this.#toSlip.shift()) {
      // A slip for an order that closed meanwhile (paid, expired) is refused with 403
      // permission-denied: the merchant's answer, not a fault of the gateway.
      await this.operate(next.merchant, 'slip', '/slip/upload', {
        platform_order_id: next.platformOrderId,
        image_base64: this.#slipImage,
      })
    }
  }

  async #importLoop() {
    while (this.#running) {
      await sleep(6000)
      await this.#importRound()
    }
  }

  /** One statement file paying the payments chosen since the last round, imported until it lands. */
  async #importRound() {
    // Slips first (stop() uploads the last ones before the last round): a payment is paid after its slip.
    const batch = this.#toPay.splice(0)
    if (batch.length === 0) return
    // A few seconds back: a line dated after the import's own clock is refused.
    const at = new Date(Date.now() + 7 * 3600_000 - 5000)
      .toISOString()
      .slice(0, 19)
      .replace('T', ' ')
    const lines = batch.map(({ platformOrderId, transferAmount }) => {
      const amount = `${Math.floor(transferAmount / 100)}.${String(transferAmount % 100).padStart(2, '0')}`
      return `${at},credit,${amount},${platformOrderId},CLUSTER FAULTS TRANSFER`
    })
    const file = join(this.target.directory, `statement-${Date.now()}.csv`)
    await writeFile(file, `date_time,direction,amount,reference,description\n${lines.join('\n')}\n`)
    const args = [
      'statements:import',
      file,
      '--account',
      String(this.options.depositAccountId),
      '--json',
    ]
    // Lines are fingerprinted: importing the same file again after a failure adds nothing twice.
    for (let attempt = 0; attempt < 20; attempt++) {
      const result = await this.target.ace(args)
      if (result.code === 0) {
        try {
          lastJson(result.stdout)
        } catch {}
        this.importRounds.ok++
        for (const { platformOrderId, transferAmount } of batch) {
          this.linesImported.set(platformOrderId, transferAmount)
        }
        return
      }
      this.importRounds.retried++
      await sleep(2000)
    }
    this.importRounds.failed++
    this.givenUp.push({ kind: 'payment', detail: `statements:import of ${file} failed 20 times` })
  }

  between(from: number, to: number) {
    return this.attempts.filter((attempt) => attempt.endedAt >= from && attempt.startedAt < to)
  }
}
