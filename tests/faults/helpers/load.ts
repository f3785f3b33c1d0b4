import type { Agent } from 'node:https'
import { sleep } from '#tests/faults/helpers/processes'
import type { ApiResponse, MerchantClient } from '#tests/faults/helpers/client'

export type RequestKind = 'withdraw' | 'payment' | 'balance'

export interface Sample extends ApiResponse {
  kind: RequestKind
}

/** Destination account numbers: the sandbox bank pays most, rejects those ending 0001-0003. */
const WITHDRAW_ACCOUNTS = [
  '1234567890',
  '1234567891',
  '5550000001',
  '1234567892',
  '5550000002',
  '5550000003',
]

/**
 * `concurrency` merchants' loops sending signed requests back to back, a mix
 * of withdraw creates, payment creates and balance reads (`mix`, repeated).
 * Every answer is kept with its start time, so that a scenario can split the
 * figures into before / during / after a fault.
 */
export class Load {
  samples: Sample[] = []
  #running = false
  #loops: Promise<void>[] = []
  #counter = 0

  constructor(
    private client: MerchantClient,
    private options: {
      concurrency: number
      mix: RequestKind[]
      notifyUrl: string
      agent?: Agent
      /** Round-robin over these gateway URLs instead of the client's. */
      baseUrls?: string[]
      timeoutMs?: number
      pauseMs?: number
    }
  ) {}

  start() {
    this.#running = true
    for (let loop = 0; loop < this.options.concurrency; loop++) this.#loops.push(this.#run())
    return this
  }

  /** Runs the loops until `total` requests have been sent, and waits for their answers. */
  async runCount(total: number) {
    const loops = Array.from({ length: this.options.concurrency }, async () => {
      while (this.#counter < total) await this.once()
    })
    await Promise.all(loops)
  }

  async stop() {
    this.#running = false
    await Promise.all(this.#loops)
    this.#loops = []
  }

  /** One request of the mix; also usable outside the loops. */
  async once(): Promise<Sample> {
    const index = this.#counter++
    const kind = this.options.mix[index % this.options.mix.length]
    const { notifyUrl } = this.options
    const baseUrls = this.options.baseUrls
    const baseUrl = baseUrls ? baseUrls[index % baseUrls.length] : undefined
    let path = '/balance'
    let fields: Record<string, unknown> = {}
    if (kind === 'withdraw') {
      path = '/withdraw/create'
      fields = this.client.withdrawFields(
        WITHDRAW_ACCOUNTS[index % WITHDRAW_ACCOUNTS.length],
        '20.00',
        notifyUrl
      )
    } else if (kind === 'payment') {
      path = '/payment/create'
      // Varied amounts keep transfer_amount slots of one deposit account apart.
      fields = this.client.paymentFields(`${100 + (index % 50)}.00`, notifyUrl)
    }
    const response = await this.client.post(path, this.client.body(fields), {
      agent: this.options.agent,
      timeoutMs: this.options.timeoutMs ?? 30_000,
      baseUrl,
    })
    const sample = { ...response, kind }
    this.samples.push(sample)
    return sample
  }

  async #run() {
    while (this.#running) {
      await this.once()
      if (this.options.pauseMs) await sleep(this.options.pauseMs)
    }
  }

  /** Samples whose request started in [from, to). */
  between(from: number, to = Number.POSITIVE_INFINITY) {
    return this.samples.filter((sample) => sample.startedAt >= from && sample.startedAt < to)
  }

  /** platform_order_ids of the payments created successfully. */
  createdPayments() {
    return this.samples
      .filter((sample) => sample.kind === 'payment' && sample.json?.success === true)
      .map((sample) => String(sample.json.data.platform_order_id))
  }
}
