import { ace, DATABASE, world } from '#tests/faults/helpers/world'
import { until } from '#tests/faults/helpers/processes'
import type { TestMerchant } from '#tests/faults/helpers/gateway'

const FINAL_PAYMENT = ['settled_paid', 'unsettled_paid', 'error']
const FINAL_PAYOUT_SUCCESS = ['success']
const FINAL_PAYOUT_FAILURE = ['failed', 'error', 'cancelled', 'rejected']

const query = <T = any>(sql: string, values: unknown[] = []) =>
  world().mariadb.query<T>(sql, values, DATABASE)

/** What is still moving for the merchant: open orders and undelivered callbacks. */
export async function pendingWork(merchant: TestMerchant) {
  const [payments] = await query(
    `SELECT COUNT(*) AS n FROM payment_orders WHERE merchant_id = ? AND status NOT IN (?)`,
    [merchant.id, FINAL_PAYMENT]
  )
  const [payouts] = await query(
    `SELECT COUNT(*) AS n FROM payout_orders WHERE merchant_id = ? AND status NOT IN (?)`,
    [merchant.id, [...FINAL_PAYOUT_SUCCESS, ...FINAL_PAYOUT_FAILURE]]
  )
  const [callbacks] = await query(
    `SELECT COUNT(*) AS n FROM callback_outbox WHERE merchant_id = ? AND state <> 'delivered'`,
    [merchant.id]
  )
  return {
    openPayments: Number(payments.n),
    openPayouts: Number(payouts.n),
    undeliveredCallbacks: Number(callbacks.n),
  }
}

/**
 * Waits until every order of the merchant is final and every callback row is
 * delivered, or `timeoutMs` passes. Returns the ms it took (or undefined) and
 * what was still pending at the end.
 */
export async function waitForQuiescence(merchant: TestMerchant, timeoutMs: number) {
  const started = Date.now()
  let last = await pendingWork(merchant).catch(() => undefined)
  const settled = await until(
    async () => {
      last = await pendingWork(merchant)
      return last.openPayments + last.openPayouts + last.undeliveredCallbacks === 0
    },
    timeoutMs,
    500
  )
  return { ms: settled ? Date.now() - started : undefined, pending: last }
}

export interface FinalStateReport {
  problems: string[]
  payments: Record<string, number>
  payouts: Record<string, number>
  callbacks: { rows: number; deliveries: number; duplicateDeliveries: number }
}

function count(target: Record<string, number>, key: string) {
  target[key] = (target[key] ?? 0) + 1
}

/**
 * The end state every scenario must reach, for one merchant:
 * - every order in exactly one final state;
 * - per payout: one hold posting, at most one hold release, then exactly one
 *   success posting (success) or one hold return (failure with the hold still
 *   held), and the hold state matching;
 * - per payment: one payment_paid posting if paid, at most one settlement,
 *   none if it expired;
 * - per order with a notify_url: exactly one callback_outbox row, of its final
 *   status, delivered, and the receiver got only that status;
 * - no ledger posting for an order that does not exist (half-written create);
 * - the balance equals credits + settled payments - successful payouts, the
 *   freeze is empty and unsettle_balance equals the unsettled payments: no
 *   order counted twice or lost.
 */
export async function checkFinalStates(merchant: TestMerchant): Promise<FinalStateReport> {
  // Paid deposits keep settling while this runs: read everything at one moment.
  return world().mariadb.snapshot((read) => checkSnapshot(merchant, read), DATABASE)
}

type Query = <R = any>(sql: string, values?: unknown[]) => Promise<R[]>

async function checkSnapshot(merchant: TestMerchant, q: Query): Promise<FinalStateReport> {
  const problems: string[] = []
  const payments: Record<string, number> = {}
  const payouts: Record<string, number> = {}

  const postings = await q<{
    reference_type: string
    reference_id: string
    kind: string
    n: string
  }>(
    `SELECT t.reference_type, t.reference_id, t.kind, COUNT(DISTINCT t.id) AS n
     FROM ledger_transactions t
     JOIN ledger_entries e ON e.transaction_id = t.id
     JOIN ledger_accounts a ON a.id = e.account_id
     WHERE a.merchant_id = ? AND t.reference_type IN ('payment', 'withdraw', 'settlement')
     GROUP BY t.reference_type, t.reference_id, t.kind`,
    [merchant.id]
  )
  const postingsOf = new Map<string, Record<string, number>>()
  for (const row of postings) {
    const key = `${row.reference_type}:${row.reference_id}`
    const kinds = postingsOf.get(key) ?? {}
    kinds[row.kind] = Number(row.n)
    postingsOf.set(key, kinds)
  }

  const outbox = await q<{ order_type: string; order_id: string; status: string; state: string }>(
    'SELECT order_type, order_id, status, state FROM callback_outbox WHERE merchant_id = ?',
    [merchant.id]
  )
  const outboxOf = new Map<string, Array<{ status: string; state: string }>>()
  for (const row of outbox) {
    const key = `${row.order_type}:${row.order_id}`
    outboxOf.set(key, [...(outboxOf.get(key) ?? []), row])
  }
  const deliveries = world().receiver.byOrder()
  let deliveryCount = 0
  let duplicateDeliveries = 0

  const checkCallbacks = (
    type: string,
    order: { id: string; platform_order_id: string; notify_url: string | null },
    status: string
  ) => {
    const rows = outboxOf.get(`${type}:${order.id}`) ?? []
    const name = order.platform_order_id
    if (!order.notify_url) {
      if (rows.length > 0) problems.push(`${name}: ${rows.length} callback rows without notify_url`)
      return
    }
    if (rows.length !== 1 || rows[0].status !== status) {
      problems.push(
        `${name}: callback rows ${JSON.stringify(rows.map((row) => row.status))}, expected ["${status}"]`
      )
    } else if (rows[0].state !== 'delivered') {
      problems.push(`${name}: callback ${status} is ${rows[0].state}, not delivered`)
    }
    const received = deliveries.get(name) ?? new Map<string, number>()
    for (const [receivedStatus, times] of received) {
      deliveryCount += times
      duplicateDeliveries += times - 1
      if (receivedStatus !== status) {
        problems.push(`${name}: receiver got ${receivedStatus}, order is final with ${status}`)
      }
    }
    if (!received.has(status)) problems.push(`${name}: receiver never got ${status}`)
  }

  const paymentRows = await q(
    `SELECT id, platform_order_id, status, amount, fee, notify_url FROM payment_orders WHERE merchant_id = ?`,
    [merchant.id]
  )
  let unsettled = 0
  let settled = 0
  for (const order of paymentRows) {
    count(payments, order.status)
    const name = order.platform_order_id
    const kinds = postingsOf.get(`payment:${name}`) ?? {}
    postingsOf.delete(`payment:${name}`)
    if (!FINAL_PAYMENT.includes(order.status)) {
      problems.push(`${name}: payment is ${order.status}, not final`)
      continue
    }
    const paid = order.status !== 'error'
    const net = Number(order.amount) - Number(order.fee ?? 0)
    if ((kinds.payment_paid ?? 0) !== (paid ? 1 : 0)) {
      problems.push(
        `${name}: ${kinds.payment_paid ?? 0} payment_paid postings, order is ${order.status}`
      )
    }
    const expectSettled = order.status === 'settled_paid' && net !== 0 ? 1 : 0
    if ((kinds.payment_settled ?? 0) !== expectSettled) {
      problems.push(
        `${name}: ${kinds.payment_settled ?? 0} payment_settled postings, order is ${order.status}`
      )
    }
    const unexpected = Object.keys(kinds).filter(
      (kind) => !['payment_paid', 'payment_settled'].includes(kind)
    )
    if (unexpected.length > 0)
      problems.push(`${name}: unexpected postings ${unexpected.join(', ')}`)
    if (order.status === 'unsettled_paid') unsettled += net
    if (order.status === 'settled_paid') settled += net
    checkCallbacks('payment', order, paid ? 'PAID' : 'FAIL')
  }

  const payoutRows = await q(
    `SELECT id, kind, platform_order_id, status, hold_state, amount, fee, notify_url
     FROM payout_orders WHERE merchant_id = ?`,
    [merchant.id]
  )
  let paidOut = 0
  for (const order of payoutRows) {
    count(payouts, order.status)
    const name = order.platform_order_id
    const kind = order.kind
    const kinds = postingsOf.get(`${kind}:${name}`) ?? {}
    postingsOf.delete(`${kind}:${name}`)
    const success = FINAL_PAYOUT_SUCCESS.includes(order.status)
    const failure = FINAL_PAYOUT_FAILURE.includes(order.status)
    if ((kinds[`${kind}_hold`] ?? 0) !== 1) {
      problems.push(`${name}: ${kinds[`${kind}_hold`] ?? 0} ${kind}_hold postings`)
    }
    const released = kinds[`${kind}_hold_release`] ?? 0
    if (released > 1) problems.push(`${name}: ${released} hold releases`)
    if (!success && !failure) {
      problems.push(`${name}: ${kind} is ${order.status} (hold ${order.hold_state}), not final`)
      continue
    }
    if ((kinds[`${kind}_success`] ?? 0) !== (success ? 1 : 0)) {
      problems.push(
        `${name}: ${kinds[`${kind}_success`] ?? 0} ${kind}_success postings, order is ${order.status}`
      )
    }
    const expectReturn = failure && released === 0 ? 1 : 0
    if ((kinds[`${kind}_hold_return`] ?? 0) !== expectReturn) {
      problems.push(
        `${name}: ${kinds[`${kind}_hold_return`] ?? 0} hold returns, order is ${order.status}`
      )
    }
    const holdState = success ? 'consumed' : 'returned'
    if (order.hold_state !== holdState) {
      problems.push(
        `${name}: hold ${order.hold_state} on a ${order.status} order, expected ${holdState}`
      )
    }
    if (success) paidOut += Number(order.amount) + Number(order.fee)
    checkCallbacks(kind, order, success ? 'SUCCESS' : 'FAIL')
  }

  // Whatever is left names an order that does not exist: half of a create was written.
  for (const [key, kinds] of postingsOf) {
    problems.push(
      `${key}: postings ${Object.keys(kinds).join(', ')} for an order that does not exist`
    )
  }

  // With orders still open the money is legitimately elsewhere; their problems are listed above.
  const allFinal = !problems.some((problem) => problem.endsWith('not final'))
  const [balance] = allFinal
    ? await q(
        'SELECT balance, freeze_balance, unsettle_balance FROM merchant_balances WHERE merchant_id = ?',
        [merchant.id]
      )
    : []
  const expected = {
    balance: merchant.credited + settled - paidOut,
    freeze_balance: 0,
    unsettle_balance: unsettled,
  }
  for (const [column, value] of Object.entries(expected)) {
    if (allFinal && Number(balance?.[column]) !== value) {
      problems.push(`balance: ${column} is ${balance?.[column]} satang, orders say ${value}`)
    }
  }

  return {
    problems,
    payments,
    payouts,
    callbacks: { rows: outbox.length, deliveries: deliveryCount, duplicateDeliveries },
  }
}

/** `node ace.js ledger:verify --json` against the private database. */
export async function ledgerVerify() {
  const result = await ace(['ledger:verify', '--json'])
  let summary = ''
  try {
    const parsed = JSON.parse(result.stdout.trim().split('\n').pop()!)
    summary = parsed.ok
      ? `${parsed.transactions} transactions, no drift`
      : parsed.drifts.map((drift: { detail: string }) => drift.detail).join('; ')
  } catch {
    summary = (result.stdout + result.stderr).trim().split('\n').slice(-5).join(' | ')
  }
  return { ok: result.code === 0, summary }
}

/**
 * `node ace.js reconcile:verify --json` against the private database: the
 * ledger against the bank statements, after the scenario's faults.
 */
export async function reconcileVerify() {
  const result = await ace(['reconcile:verify', '--json'])
  let summary = ''
  try {
    const parsed = JSON.parse(result.stdout.trim().split('\n').pop()!)
    summary = parsed.ok
      ? `${parsed.days.length} account-days, ${parsed.openReceivables.length} open receivables, ${parsed.openTransfers.length} transfers waiting`
      : parsed.problems.map((problem: { detail: string }) => problem.detail).join('; ')
  } catch {
    summary = (result.stdout + result.stderr).trim().split('\n').slice(-5).join(' | ')
  }
  return { ok: result.code === 0, summary }
}
