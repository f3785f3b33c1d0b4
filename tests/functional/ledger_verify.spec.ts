import { test } from '@japa/runner'
import { ace } from '#tests/helpers/ace'
import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import PayoutOrder, { type HoldState, type PayoutKind } from '#payouts/models/payout_order'
import type { PayoutStatus } from '#payouts/payout_state'
import { verifyLedger } from '#ledger/verify'
import { readMerchantBalance } from '#ledger/ledger'
import { completePayout, releasePayoutHold } from '#payouts/actions/complete_payout'
import { dispatchPayout } from '#payouts/actions/dispatch_payout'
import { formatAmount } from '#core/money'
import {
  authBody,
  createPayoutMerchant,
  creditMerchant,
  resetDatabase,
  signedPost,
  type TestMerchant,
} from '#tests/helpers/merchants'
import type { RawResponse } from '#tests/helpers/http'

/** Runs a real `node ace` process against the test database, as an operator would. */

/** The last stdout line of a --json command, parsed. */
function lastJson(result: { stdout: string }) {
  return JSON.parse(result.stdout.trim().split('\n').pop()!)
}

/**
 * Seeded PRNG (mulberry32): a failing run is replayed with
 * LEDGER_WORKLOAD_SEED=<seed printed in the assertion message>.
 */
function mulberry32(seed: number) {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

// CI replays a fixed workload so that a red run always reproduces; locally a
// fresh seed each run explores more (LEDGER_WORKLOAD_SEED pins one).
const SEED = Number(
  process.env.LEDGER_WORKLOAD_SEED ??
    (process.env.CI ? 835711934 : Math.floor(Math.random() * 2 ** 31))
)
const OPERATIONS = 150
const BANKS = ['KBANK', 'SCB', 'BBL', 'KTB'] as const

interface ModelOrder {
  id: number
  platformOrderId: string
  kind: PayoutKind
  amount: number
  fee: number
  status: PayoutStatus
  hold: HoldState
}

interface ModelMerchant {
  who: TestMerchant
  withdrawFeeFlat: number
  withdrawFeeRateBps: number
  settlementFeeFlat: number
  balance: number
  freeze: number
  unsettle: number
  negative: boolean
  orders: ModelOrder[]
  /** merchant_order_ids of settlements refused for balance: free to use again. */
  refusedSettlementIds: string[]
}

/** Merchants with different fee settings, all paying out through the sandbox bank. */
const FEE_SETTINGS = [
  { withdrawFeeFlat: 5_00, withdrawFeeRateBps: 0, settlementFeeFlat: 25_00 },
  { withdrawFeeFlat: 0, withdrawFeeRateBps: 150, settlementFeeFlat: 10_00 },
  { withdrawFeeFlat: 2_50, withdrawFeeRateBps: 75, settlementFeeFlat: 0 },
  { withdrawFeeFlat: 0, withdrawFeeRateBps: 0, settlementFeeFlat: 15_00 },
]

function expectedFee(merchant: ModelMerchant, kind: PayoutKind, amount: number) {
  if (kind === 'settlement') return merchant.settlementFeeFlat
  return (
    merchant.withdrawFeeFlat + Math.floor((amount * merchant.withdrawFeeRateBps + 5000) / 10000)
  )
}

test.group('ledger:verify after a mixed payout workload', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.timeout(90_000)

  test('randomized credits, holds, completions and releases keep the ledger and /balance exact', async ({
    assert,
  }) => {
    const random = mulberry32(SEED)
    const randInt = (min: number, max: number) => min + Math.floor(random() * (max - min + 1))
    const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]

    const merchants: ModelMerchant[] = []
    for (const settings of FEE_SETTINGS) {
      const who = await createPayoutMerchant(0, settings)
      merchants.push({
        who,
        ...settings,
        balance: 0,
        freeze: 0,
        unsettle: 0,
        negative: false,
        orders: [],
        refusedSettlementIds: [],
      })
    }

    let transactions = 0
    let orderSequence = 0
    let step = 0
    const history: string[] = []
    const note = (text: string) => history.push(`#${step} ${text}`)
    const where = () =>
      `[seed ${SEED}; replay with LEDGER_WORKLOAD_SEED=${SEED}] ${history.slice(-6).join(' | ')}`

    async function assertProjection(merchant: ModelMerchant) {
      const actual = await readMerchantBalance(merchant.who.merchant.id)
      assert.deepEqual(
        actual,
        {
          balance: merchant.balance,
          freezeBalance: merchant.freeze,
          unsettleBalance: merchant.unsettle,
        },
        `${merchant.who.merchantId} projection ${where()}`
      )
    }

    async function credit(
      merchant: ModelMerchant,
      account: 'available' | 'unsettled',
      satang: number
    ) {
      note(`credit ${merchant.who.merchantId} ${account} ${formatAmount(satang)}`)
      await creditMerchant(merchant.who.merchant, account, satang)
      if (account === 'available') merchant.balance += satang
      else merchant.unsettle += satang
      transactions += 1
    }

    function sendCreate(
      merchant: ModelMerchant,
      kind: PayoutKind,
      amount: number,
      orderId?: string
    ) {
      orderSequence += 1
      const merchantOrderId = orderId ?? `${kind === 'withdraw' ? 'W' : 'S'}${orderSequence}`
      const body = authBody(merchant.who, {
        merchant_order_id: merchantOrderId,
        amount: formatAmount(amount),
        bank: pick(BANKS),
        account_name: 'Somchai Jaidee',
        account_no: `${randInt(100, 999)}${String(orderSequence).padStart(7, '0')}`,
      })
      const path = kind === 'withdraw' ? '/withdraw/create' : '/thb-settlement/create'
      return { merchantOrderId, response: signedPost(path, merchant.who, body) }
    }

    /** Applies an accepted create to the model, after checking what was stored, and dispatches it. */
    async function accepted(
      merchant: ModelMerchant,
      kind: PayoutKind,
      amount: number,
      response: RawResponse
    ) {
      const platformOrderId = response.json.data.platform_order_id
      assert.equal(platformOrderId[3], kind === 'withdraw' ? 'W' : 'M', where())
      const order = await PayoutOrder.query()
        .where('platform_order_id', platformOrderId)
        .firstOrFail()
      const fee = expectedFee(merchant, kind, amount)
      assert.equal(order.merchantId, merchant.who.merchant.id, where())
      assert.equal(order.amount, amount, where())
      assert.equal(order.fee, fee, `fee of ${kind} ${formatAmount(amount)} ${where()}`)
      if (kind === 'settlement') assert.equal(response.json.data.fee, fee / 100, where())
      assert.equal(await dispatchPayout(order.id), 'pending', where())
      merchant.balance -= amount + fee
      merchant.freeze += amount + fee
      transactions += 1
      merchant.orders.push({
        id: order.id,
        platformOrderId,
        kind,
        amount,
        fee,
        status: 'pending',
        hold: 'held',
      })
    }

    async function refused(
      merchant: ModelMerchant,
      kind: PayoutKind,
      merchantOrderId: string,
      response: RawResponse
    ) {
      assert.equal(response.status, 400, `${response.text} ${where()}`)
      assert.equal(response.json.error, 'invalid-inputs', where())
      assert.include(response.json.message, 'insufficient balance', where())
      const written = await db
        .from('payout_orders')
        .where({ merchant_id: merchant.who.merchant.id, merchant_order_id: merchantOrderId })
        .count('* as total')
        .first()
      assert.equal(Number(written.total), 0, `a refused create wrote an order ${where()}`)
      if (kind === 'settlement') merchant.refusedSettlementIds.push(merchantOrderId)
      await assertProjection(merchant)
    }

    /** One create, sequential: the model knows whether it fits. */
    async function create(merchant: ModelMerchant, kind: PayoutKind, amount: number) {
      const reuse = kind === 'settlement' ? merchant.refusedSettlementIds.shift() : undefined
      const total = amount + expectedFee(merchant, kind, amount)
      const fits = total <= merchant.balance
      note(
        `${kind} ${merchant.who.merchantId} ${formatAmount(amount)} (total ${formatAmount(total)}, balance ${formatAmount(merchant.balance)})${reuse ? ` reusing ${reuse}` : ''}`
      )
      const { merchantOrderId, response } = sendCreate(merchant, kind, amount, reuse)
      const answer = await response
      if (fits) {
        assert.equal(answer.status, 200, `${answer.text} ${where()}`)
        await accepted(merchant, kind, amount, answer)
      } else {
        await refused(merchant, kind, merchantOrderId, answer)
      }
    }

    function openOrders(hold: HoldState) {
      return merchants.flatMap((merchant) =>
        merchant.orders
          .filter((order) => order.status === 'pending' && order.hold === hold)
          .map((order) => ({ merchant, order }))
      )
    }

    async function complete(merchant: ModelMerchant, order: ModelOrder, success: boolean) {
      const total = order.amount + order.fee
      const status = success ? 'success' : random() < 0.3 ? 'error' : 'failed'
      note(`complete ${order.platformOrderId} (${order.hold}) → ${status}`)
      const done = await completePayout(
        order.id,
        success
          ? { success: true }
          : { success: false, reason: 'x', status: status as 'failed' | 'error' }
      )
      assert.isTrue(done, where())
      if (order.hold === 'held') {
        merchant.freeze -= total
        if (!success) merchant.balance += total
        transactions += 1
      } else if (success) {
        // Late success after the timeout returned the hold: debits balance, maybe below zero.
        merchant.balance -= total
        if (merchant.balance < 0) merchant.negative = true
        transactions += 1
      }
      order.status = status
      order.hold = success ? 'consumed' : 'returned'
    }

    async function release(merchant: ModelMerchant, order: ModelOrder) {
      note(`release ${order.platformOrderId}`)
      // Not yet expired: nothing happens.
      assert.isFalse(await releasePayoutHold(order.id), `released before expiry ${where()}`)
      assert.isTrue(
        await releasePayoutHold(order.id, DateTime.utc().plus({ minutes: 11 })),
        where()
      )
      merchant.balance += order.amount + order.fee
      merchant.freeze -= order.amount + order.fee
      order.hold = 'released'
      transactions += 1
    }

    /** Concurrent creates: equal amounts per merchant, so the number that fit is known. */
    async function concurrentBatch() {
      const batch: Array<{
        merchant: ModelMerchant
        kind: PayoutKind
        amount: number
        count: number
        expected: number
        requests: Array<ReturnType<typeof sendCreate>>
      }> = []
      for (const merchant of merchants) {
        if (random() < 0.4) continue
        const kind: PayoutKind = random() < 0.7 ? 'withdraw' : 'settlement'
        const count = randInt(3, 6)
        const fitting = randInt(1, count + 1)
        // Roughly `fitting` of them fit into the balance; the model decides exactly.
        const share = Math.floor(merchant.balance / (fitting + 0.5))
        const fee = kind === 'withdraw' ? merchant.withdrawFeeFlat : merchant.settlementFeeFlat
        let amount = Math.floor((share - fee) / (1 + merchant.withdrawFeeRateBps / 10000))
        const min = kind === 'withdraw' ? 20_00 : 100_00
        if (amount < min) amount = min + randInt(0, 500_00)
        const total = amount + expectedFee(merchant, kind, amount)
        const expected = Math.min(count, Math.max(0, Math.floor(merchant.balance / total)))
        batch.push({ merchant, kind, amount, count, expected, requests: [] })
      }
      note(
        `batch ${batch.map((entry) => `${entry.merchant.who.merchantId}: ${entry.count}× ${entry.kind} ${formatAmount(entry.amount)}, ${entry.expected} fit`).join('; ')}`
      )
      for (const entry of batch) {
        for (let i = 0; i < entry.count; i++) {
          entry.requests.push(sendCreate(entry.merchant, entry.kind, entry.amount))
        }
      }
      const answers = await Promise.all(
        batch.map((entry) => Promise.all(entry.requests.map((request) => request.response)))
      )
      for (const [index, entry] of batch.entries()) {
        const list = answers[index]
        const ok = list.filter((answer) => answer.status === 200)
        assert.equal(
          ok.length,
          entry.expected,
          `${entry.merchant.who.merchantId}: ${list.map((answer) => answer.status).join(',')} ${where()}`
        )
        for (const answer of ok) await accepted(entry.merchant, entry.kind, entry.amount, answer)
        for (const [i, answer] of list.entries()) {
          if (answer.status !== 200) {
            await refused(entry.merchant, entry.kind, entry.requests[i].merchantOrderId, answer)
          }
        }
      }
    }

    // Opening balances.
    for (const merchant of merchants)
      await credit(merchant, 'available', randInt(2_000_00, 20_000_00))

    for (step = 1; step <= OPERATIONS; step++) {
      const merchant = pick(merchants)
      const held = openOrders('held')
      const released = openOrders('released')
      let roll = random()
      // Steps that need an open order become withdrawals when there is none.
      if (roll >= 0.46 && roll < 0.8 && held.length === 0) roll = 0.95
      if (roll >= 0.8 && roll < 0.87 && released.length === 0) roll = 0.95
      if (roll < 0.12) {
        await credit(merchant, random() < 0.75 ? 'available' : 'unsettled', randInt(1_00, 8_000_00))
      } else if (roll < 0.34) {
        // Mostly affordable, sometimes deliberately more than the balance.
        const amount =
          random() < 0.2
            ? Math.max(20_00, merchant.balance + randInt(1, 1_000_00))
            : randInt(20_00, Math.max(20_00, Math.min(merchant.balance, 6_000_00)))
        await create(merchant, 'withdraw', amount)
      } else if (roll < 0.46) {
        const amount =
          random() < 0.2
            ? Math.max(100_00, merchant.balance - merchant.settlementFeeFlat + randInt(1, 50_00))
            : randInt(100_00, Math.max(100_00, Math.min(merchant.balance, 8_000_00)))
        await create(merchant, 'settlement', Math.min(amount, 500_000_00))
      } else if (roll < 0.62) {
        const { merchant: owner, order } = pick(held)
        await complete(owner, order, true)
      } else if (roll < 0.7) {
        const { merchant: owner, order } = pick(held)
        await complete(owner, order, false)
      } else if (roll < 0.8) {
        const { merchant: owner, order } = pick(held)
        await release(owner, order)
      } else if (roll < 0.87) {
        const { merchant: owner, order } = pick(released)
        await complete(owner, order, random() < 0.65)
      } else if (roll < 0.91) {
        await concurrentBatch()
      } else if (roll < 0.94) {
        // Replays are no-ops: a final order stays final, a settled hold is not released.
        const final = merchants.flatMap((m) =>
          m.orders.filter((order) => order.status !== 'pending')
        )
        if (final.length === 0) continue
        const order = pick(final)
        note(`replay ${order.platformOrderId} (${order.status})`)
        assert.isFalse(await completePayout(order.id, { success: true }), where())
        assert.isFalse(
          await releasePayoutHold(order.id, DateTime.utc().plus({ minutes: 30 })),
          where()
        )
      } else {
        await create(merchant, 'withdraw', randInt(20_00, 3_000_00))
      }
      if (step % 25 === 0) for (const each of merchants) await assertProjection(each)
    }

    // Deterministic tail: a late success after a released hold takes balance below zero.
    step = OPERATIONS + 1
    const victim = merchants[0]
    // The random part may already have taken this merchant below zero (a late
    // success); top it up so that the tail starts from a known, positive balance.
    await credit(victim, 'available', Math.max(1_000_00 - victim.balance, 500_00))
    await create(victim, 'withdraw', 100_00)
    const late = victim.orders.at(-1)!
    await release(victim, late)
    // Spend everything (merchant 0 has a flat fee only).
    await create(victim, 'withdraw', victim.balance - victim.withdrawFeeFlat)
    assert.equal(victim.balance, 0, where())
    await complete(victim, late, true)
    assert.isBelow(victim.balance, 0, where())
    assert.isTrue(victim.negative, where())
    // A negative balance refuses every further hold.
    await create(victim, 'withdraw', 20_00)

    // The merchant API shows exactly what the model expects.
    for (const merchant of merchants) {
      const response = await signedPost('/balance', merchant.who, authBody(merchant.who))
      assert.equal(response.status, 200, response.text)
      assert.deepEqual(
        response.json.data,
        {
          balance: merchant.balance / 100,
          freeze_balance: merchant.freeze / 100,
          unsettle_balance: merchant.unsettle / 100,
        },
        `${merchant.who.merchantId} /balance ${response.text} [seed ${SEED}]`
      )
      await merchant.who.merchant.refresh()
      assert.equal(
        merchant.who.merchant.negativeBalanceFlag,
        merchant.negative,
        `${merchant.who.merchantId} negative_balance_flag [seed ${SEED}]`
      )
      const stored = await PayoutOrder.query().where('merchant_id', merchant.who.merchant.id)
      assert.deepEqual(
        Object.fromEntries(
          stored.map((order) => [order.platformOrderId, `${order.status}/${order.holdState}`])
        ),
        Object.fromEntries(
          merchant.orders.map((order) => [order.platformOrderId, `${order.status}/${order.hold}`])
        ),
        `${merchant.who.merchantId} orders [seed ${SEED}]`
      )
    }
    const counts = merchants.map((merchant) => merchant.orders.length)
    assert.isAbove(
      counts.reduce((sum, count) => sum + count, 0),
      30,
      `workload too thin [seed ${SEED}]`
    )

    // The operator's check agrees: balanced, no drift.
    const clean = await ace('ledger:verify', '--json')
    assert.equal(clean.code, 0, `${clean.output} [seed ${SEED}]`)
    const report = lastJson(clean)
    assert.deepEqual(report, {
      ok: true,
      merchants: merchants.length,
      transactions,
      drifts: [],
    })
    assert.deepEqual(await verifyLedger(), {
      merchants: merchants.length,
      transactions,
      drifts: [],
    })

    // Tamper 1: one entry of a gateway account changes; its transaction no longer sums to zero.
    const entry = await db
      .from('ledger_entries')
      .join('ledger_accounts', 'ledger_accounts.id', 'ledger_entries.account_id')
      .whereNull('ledger_accounts.merchant_id')
      .select('ledger_entries.id', 'ledger_entries.transaction_id')
      .orderBy('ledger_entries.id', 'desc')
      .firstOrFail()
    await db.rawQuery('UPDATE ledger_entries SET amount = amount + 1 WHERE id = ?', [entry.id])
    const unbalanced = [
      {
        kind: 'unbalanced_transaction',
        detail: `ledger transaction ${entry.transaction_id} sums to 1`,
      },
    ]
    const tampered = await ace('ledger:verify', '--json')
    assert.equal(tampered.code, 1, tampered.output)
    assert.deepEqual(lastJson(tampered), {
      ok: false,
      merchants: merchants.length,
      transactions,
      drifts: unbalanced,
    })
    assert.deepEqual((await verifyLedger()).drifts, unbalanced)
    await db.rawQuery('UPDATE ledger_entries SET amount = amount - 1 WHERE id = ?', [entry.id])

    // Tamper 2: the projection of one merchant drifts from its entries.
    const drifted = merchants[1]
    await db.rawQuery('UPDATE merchant_balances SET balance = balance + 1 WHERE merchant_id = ?', [
      drifted.who.merchant.id,
    ])
    const drift = [
      {
        kind: 'projection_drift',
        detail: `merchant ${drifted.who.merchantId}: balance is ${drifted.balance + 1} satang, entries sum to ${drifted.balance}`,
      },
    ]
    const driftJson = await ace('ledger:verify', '--json')
    assert.equal(driftJson.code, 1, driftJson.output)
    assert.deepEqual(lastJson(driftJson).drifts, drift)
    assert.isFalse(lastJson(driftJson).ok)
    // The human-readable form names the kind and the merchant too.
    const driftText = await ace('ledger:verify')
    assert.equal(driftText.code, 1, driftText.output)
    assert.include(driftText.output, 'projection_drift')
    assert.include(driftText.output, drifted.who.merchantId)
    assert.deepEqual((await verifyLedger()).drifts, drift)

    // Each command run is recorded for monitoring (gateway_ledger_verify_*), as the worker's is.
    const runs = await db
      .from('ledger_verify_runs')
      .orderBy('id')
      .select('drifts', 'transactions', 'actor')
    assert.deepEqual(
      runs.map((run) => Number(run.drifts)),
      [0, unbalanced.length, drift.length, drift.length]
    )
    assert.equal(Number(runs[0].transactions), transactions)

    await db.rawQuery('UPDATE merchant_balances SET balance = balance - 1 WHERE merchant_id = ?', [
      drifted.who.merchant.id,
    ])
    assert.deepEqual((await verifyLedger()).drifts, [])
  })
})
