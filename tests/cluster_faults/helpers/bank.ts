import type { Credentials } from '#tests/faults/helpers/client'
import { letOpenPaymentsExpire as expireOpenPayments } from '#tests/faults/helpers/expiry'
import { aceOk, lastJson, patientQuery, type Target } from '#tests/cluster_faults/helpers/target'
import type { MixedLoad } from '#tests/cluster_faults/helpers/mixed_load'

export const PLATFORM = 'cfaults'
export const ORDER_TTL_SECONDS = 90

export interface BankMerchant {
  label: string
  credentials: Credentials
  /** merchants.id */
  id: number
  /** Satang of opening balance credited by the suite. */
  credited: number
}

const satang = (thb: unknown) => Math.round(Number(thb) * 100)

/** The platform, one deposit account of its group; returns the deposit account's id. */
export async function preparePlatform(target: Target) {
  const platform = await target.ace([
    'platform:create',
    '--code',
    PLATFORM,
    '--name',
    'Cluster faults',
    '--json',
  ])
  // What counts is the platform row; the command's exit status is its own concern.
  const platforms = await target.query('SELECT id FROM platforms WHERE code = ?', [PLATFORM])
  if (platforms.length !== 1) {
    throw new Error(
      `platform:create exited ${platform.code}:\n${platform.stdout}${platform.stderr}`
    )
  }
  await aceOk(target, [
    'deposit-account:create',
    '--group',
    PLATFORM,
    '--channel',
    'qr',
    '--bank',
    'KBANK',
    '--account-no',
    '0019876543',
    '--account-name',
    'Cluster Faults Co., Ltd.',
    '--promptpay-id',
    '0812345678',
    '--json',
  ])
  const [row] = await target.query<{ id: number }>(
    'SELECT id FROM deposit_accounts WHERE account_no = ?',
    ['0019876543']
  )
  return Number(row.id)
}

/**
 * A merchant of the bank check: fees on (1 % per payment, 1.00 THB per
 * withdrawal, 5.00 THB per settlement) so that fee revenue is part of the
 * conservation, payouts through the sandbox bank, the withdraw duplicate rule
 * on (the idempotency of a retried withdrawal), slips accepted at once, and
 * `balance` satang of opening balance.
 */
export async function createBankMerchant(target: Target, label: string, balance: number) {
  const created = lastJson(
    (
      await aceOk(target, [
        'merchant:create',
        '--platform',
        PLATFORM,
        '--name',
        `Bank ${label}`,
        '--json',
      ])
    ).stdout
  )
  await aceOk(target, [
    'merchant:configure',
    created.merchant_id,
    '--deposit-group',
    PLATFORM,
    '--payout-route',
    'sandbox',
    '--order-ttl',
    String(ORDER_TTL_SECONDS),
    '--payment-fee-rate',
    '100',
    '--withdraw-fee',
    '1.00',
    '--settlements',
    'on',
    '--settlement-fee',
    '5.00',
    '--settlement-min',
    '100.00',
    '--withdraw-duplicate-check',
    'on',
    '--slip-upload-wait',
    '0',
    '--json',
  ])
  const [row] = await target.query<{ id: number }>(
    'SELECT id FROM merchants WHERE merchant_id = ?',
    [created.merchant_id]
  )
  const merchant: BankMerchant = {
    label,
    credentials: { merchant_id: created.merchant_id, token: created.token, secret: created.secret },
    id: Number(row.id),
    credited: 0,
  }
  await credit(target, merchant, balance)
  target.receiver.trust(created.merchant_id, created.secret)
  return merchant
}

/**
 * An opening balance as an operator adjustment posts it: adjustments →
 * available, and the balance projection, in one database transaction.
 */
async function credit(target: Target, merchant: BankMerchant, amount: number) {
  await target.query(
    `INSERT IGNORE INTO ledger_accounts (merchant_id, owner, code, created_at)
     VALUES (NULL, 'gateway', 'adjustments', NOW())`
  )
  await target.transaction(async (query) => {
    const result: any = await query(
      `INSERT INTO ledger_transactions (kind, reference_type, reference_id, description, created_at)
       VALUES ('test_adjustment', 'merchant', ?, 'cluster fault suite opening balance', NOW(3))`,
      [merchant.credentials.merchant_id]
    )
    await query(
      `INSERT INTO ledger_entries (transaction_id, account_id, amount)
       SELECT ?, id, ? FROM ledger_accounts WHERE owner = 'gateway' AND code = 'adjustments'`,
      [result.insertId, -amount]
    )
    await query(
      `INSERT INTO ledger_entries (transaction_id, account_id, amount)
       SELECT ?, id, ? FROM ledger_accounts WHERE owner = ? AND code = 'available'`,
      [result.insertId, amount, String(merchant.id)]
    )
    await query(
      'UPDATE merchant_balances SET balance = balance + ?, updated_at = NOW(3) WHERE merchant_id = ?',
      [amount, merchant.id]
    )
  })
  merchant.credited += amount
}

const FINAL_PAYMENT = ['settled_paid', 'unsettled_paid', 'error']
const FINAL_PAYOUT = ['success', 'failed', 'error', 'cancelled', 'rejected']

/** Open orders and undelivered callbacks of the run. */
export async function pending(target: Target) {
  const [row] = await patientQuery(
    target,
    `SELECT
       (SELECT COUNT(*) FROM payment_orders WHERE status NOT IN (?)) AS payments,
       (SELECT COUNT(*) FROM payout_orders WHERE status NOT IN (?)) AS payouts,
       (SELECT COUNT(*) FROM callback_outbox WHERE state <> 'delivered') AS callbacks`,
    [FINAL_PAYMENT, FINAL_PAYOUT]
  )
  return {
    payments: Number(row.payments),
    payouts: Number(row.payouts),
    callbacks: Number(row.callbacks),
  }
}

/** Every unpaid order outlives its TTL now, once the load has stopped (tests/faults/helpers/expiry.ts). */
export function letOpenPaymentsExpire(target: Target) {
  return expireOpenPayments((sql, values) => patientQuery(target, sql, values), ORDER_TTL_SECONDS)
}

export interface EndReport {
  problems: string[]
  rows: Array<[string, string]>
}

/**
 * What must hold once everything is final:
 * - every create answered 200 exists with the answered fields; every
 *   operation whose answer was lost (409 on the retry) exists exactly once;
 *   no idempotency key has two orders;
 * - every order is in one final state, with the postings of that state;
 * - every order with a notify_url got its final status delivered (dedup key
 *   platform_order_id + status), no other status; duplicates counted;
 * - the ledger sums to zero, and the bank check: the books equal what the
 *   bank saw (see bankCheck).
 */
export async function endChecks(
  target: Target,
  merchants: BankMerchant[],
  load: MixedLoad
): Promise<EndReport> {
  const problems: string[] = []
  const rows: Array<[string, string]> = []
  const payments = await patientQuery(
    target,
    `SELECT id, merchant_id, platform_order_id, merchant_order_id, status, amount, transfer_amount, fee,
            customer_account_no AS account_no, customer_bank AS bank,
            customer_account_name AS account_name, notify_url
     FROM payment_orders`
  )
  const payouts = await patientQuery(
    target,
    `SELECT id, kind, merchant_id, platform_order_id, merchant_order_id, status, hold_state, amount, fee,
            account_no, bank, account_name, notify_url
     FROM payout_orders`
  )
  const byPlatformId = new Map<string, any>()
  const byKey = new Map<string, any[]>()
  for (const order of [...payments, ...payouts]) {
    byPlatformId.set(order.platform_order_id, order)
    const key = `${order.merchant_id}:${order.merchant_order_id}`
    byKey.set(key, [...(byKey.get(key) ?? []), order])
  }

  // 1. Answered creates exist with the answered fields.
  let compared = 0
  for (const answer of load.answered) {
    const order = byPlatformId.get(String(answer.data.platform_order_id))
    const name = `${answer.kind} ${answer.data.platform_order_id}`
    if (!order) {
      problems.push(`${name}: answered 200, not in the database`)
      continue
    }
    compared++
    const expect: Record<string, [unknown, unknown]> = {
      merchant: [Number(order.merchant_id), answer.merchant.id],
      merchant_order_id: [order.merchant_order_id, answer.fields.merchant_order_id],
      amount: [Number(order.amount), satang(answer.fields.amount)],
      answered_amount: [Number(order.amount), satang(answer.data.amount)],
      account_no: [order.account_no, answer.fields.account_no],
      bank: [order.bank, answer.fields.bank],
      account_name: [order.account_name, answer.fields.account_name],
    }
    if (answer.kind === 'payment') {
      expect.transfer_amount = [Number(order.transfer_amount), satang(answer.data.transfer_amount)]
    } else {
      expect.kind = [order.kind, answer.kind]
    }
    if (answer.kind === 'settlement') {
      expect.fee = [Number(order.fee), satang(answer.data.fee)]
    }
    for (const [field, [stored, answered]] of Object.entries(expect)) {
      if (stored !== answered)
        problems.push(`${name}: ${field} ${stored} in the database, answered ${answered}`)
    }
  }
  rows.push([
    'answered creates',
    `${load.answered.length}, ${compared} found with the answered fields`,
  ])

  // 2. Lost answers: the operation happened exactly once.
  for (const lost of load.answerLost) {
    if (lost.kind === 'slip') continue
    const key = `${lost.merchant.id}:${lost.fields.merchant_order_id}`
    const found = byKey.get(key) ?? []
    const matching =
      lost.kind === 'withdraw'
        ? payouts.filter(
            (order) =>
              Number(order.merchant_id) === lost.merchant.id &&
              order.account_no === lost.fields.account_no &&
              Number(order.amount) === satang(lost.fields.amount)
          )
        : found
    if (matching.length !== 1) {
      problems.push(
        `${lost.kind} ${lost.fields.merchant_order_id}: answer lost, ${matching.length} orders found (expected 1)`
      )
    }
  }
  for (const [key, orders] of byKey) {
    if (orders.length > 1 && orders.some((order) => order.kind !== 'withdraw')) {
      problems.push(`merchant_order_id ${key}: ${orders.length} orders`)
    }
  }
  // Withdrawals are keyed by bank + account + amount (unique per request in the load).
  const withdrawKeys = new Map<string, number>()
  for (const order of payouts.filter((row) => row.kind === 'withdraw')) {
    const key = `${order.merchant_id}:${order.account_no}:${order.amount}`
    withdrawKeys.set(key, (withdrawKeys.get(key) ?? 0) + 1)
  }
  for (const [key, n] of withdrawKeys)
    if (n > 1) problems.push(`withdrawal ${key}: ${n} orders (paid twice)`)
  rows.push([
    'answers lost, done once',
    `${load.answerLost.filter((lost) => lost.after === 'unanswered').length} after no answer, ${load.answerLost.filter((lost) => lost.after === 'refused').length} after a 503 (409/429 on the retry)`,
  ])

  // 3. One final state per order, with its postings.
  const postings = await patientQuery<{
    reference_type: string
    reference_id: string
    kind: string
    n: string
  }>(
    target,
    `SELECT reference_type, reference_id, kind, COUNT(*) AS n FROM ledger_transactions
     WHERE reference_type IN ('payment', 'withdraw', 'settlement')
     GROUP BY reference_type, reference_id, kind`
  )
  const postingsOf = new Map<string, Record<string, number>>()
  for (const row of postings) {
    const key = `${row.reference_type}:${row.reference_id}`
    postingsOf.set(key, { ...(postingsOf.get(key) ?? {}), [row.kind]: Number(row.n) })
  }
  const outcomes: Record<string, number> = {}
  const expectedCallback = new Map<string, string>()
  for (const order of payments) {
    const kinds = postingsOf.get(`payment:${order.platform_order_id}`) ?? {}
    outcomes[`payment ${order.status}`] = (outcomes[`payment ${order.status}`] ?? 0) + 1
    if (!FINAL_PAYMENT.includes(order.status)) {
      problems.push(`${order.platform_order_id}: payment ${order.status}, not final`)
      continue
    }
    const paid = order.status !== 'error'
    if ((kinds.payment_paid ?? 0) !== (paid ? 1 : 0)) {
      problems.push(
        `${order.platform_order_id}: ${kinds.payment_paid ?? 0} payment_paid postings, ${order.status}`
      )
    }
    if ((kinds.payment_settled ?? 0) > 1) problems.push(`${order.platform_order_id}: settled twice`)
    if (order.notify_url) expectedCallback.set(order.platform_order_id, paid ? 'PAID' : 'FAIL')
  }
  for (const order of payouts) {
    const kinds = postingsOf.get(`${order.kind}:${order.platform_order_id}`) ?? {}
    outcomes[`${order.kind} ${order.status}`] = (outcomes[`${order.kind} ${order.status}`] ?? 0) + 1
    if (!FINAL_PAYOUT.includes(order.status)) {
      problems.push(`${order.platform_order_id}: ${order.kind} ${order.status}, not final`)
      continue
    }
    const success = order.status === 'success'
    if ((kinds[`${order.kind}_hold`] ?? 0) !== 1)
      problems.push(`${order.platform_order_id}: ${kinds[`${order.kind}_hold`] ?? 0} holds`)
    if ((kinds[`${order.kind}_success`] ?? 0) !== (success ? 1 : 0)) {
      problems.push(
        `${order.platform_order_id}: ${kinds[`${order.kind}_success`] ?? 0} success postings, ${order.status}`
      )
    }
    const released =
      (kinds[`${order.kind}_hold_release`] ?? 0) + (kinds[`${order.kind}_hold_return`] ?? 0)
    if (!success && released !== 1)
      problems.push(`${order.platform_order_id}: ${released} hold returns, ${order.status}`)
    if (order.notify_url)
      expectedCallback.set(order.platform_order_id, success ? 'SUCCESS' : 'FAIL')
  }
  rows.push([
    'orders final',
    Object.entries(outcomes)
      .map(([k, n]) => `${k}: ${n}`)
      .join(', '),
  ])

  // 4. Callbacks: dedup key platform_order_id + status.
  const received = target.receiver.byOrder()
  let missing = 0
  let wrong = 0
  let deliveries = 0
  let duplicates = 0
  for (const [platformOrderId, status] of expectedCallback) {
    const statuses = received.get(platformOrderId) ?? new Map<string, number>()
    for (const [got, times] of statuses) {
      deliveries += times
      duplicates += times - 1
      if (got !== status) wrong++
    }
    if (!statuses.has(status)) missing++
  }
  const unknown = [...received.keys()].filter((id) => !expectedCallback.has(id)).length
  rows.push([
    'callbacks',
    `${expectedCallback.size} expected, ${deliveries} delivered, ${missing} missing, ${wrong} wrong status, ${duplicates} duplicates, ${unknown} for unknown orders`,
  ])
  if (missing > 0) problems.push(`${missing} callbacks never delivered`)
  if (wrong > 0) problems.push(`${wrong} callbacks with a status other than the order's final one`)
  if (unknown > 0) problems.push(`${unknown} callbacks for orders not in the database`)

  // 5. Money.
  const bank = await bankCheck(target, merchants, load, payments, payouts, received)
  problems.push(...bank.problems)
  rows.push(...bank.rows)
  return { problems, rows }
}

const thb = (value: number) => (value / 100).toFixed(2)

/**
 * Jepsen's bank, on the gateway's books. The ledger is double entry: every
 * posting sums to zero, so the sum of all accounts is 0. Split by what the
 * bank saw (app/ledger/accounts.ts, recipes.ts):
 *
 *   Σ merchants (available + frozen + unsettled)   what merchants hold, holds in flight included
 * + fee_revenue + slot_adjustment                  what the gateway earned / added to amounts
 * + deposit_clearing + deposit_receivable          receipts not (yet) credited / credits not yet received
 * = opening balances (−adjustments)
 * + deposits received (−Σ bank:*  = Σ statement credit lines)
 * − payouts sent (payout_clearing: no debit lines are imported in the run)
 *
 * The right side is computed from the suite's own records: opening balances
 * it credited, the statement lines it imported, the payouts the merchants
 * were told succeeded (SUCCESS callbacks × the order's amount). Per merchant
 * the balance must also equal opening + paid payments (amount − fee) −
 * successful payouts (amount + fee).
 */
async function bankCheck(
  target: Target,
  merchants: BankMerchant[],
  load: MixedLoad,
  payments: any[],
  payouts: any[],
  received: Map<string, Map<string, number>>
) {
  const problems: string[] = []
  const rows: Array<[string, string]> = []
  const accounts = await patientQuery<{ owner: string; code: string; total: string }>(
    target,
    `SELECT a.owner, a.code, COALESCE(SUM(e.amount), 0) AS total
     FROM ledger_accounts a LEFT JOIN ledger_entries e ON e.account_id = a.id
     GROUP BY a.owner, a.code`
  )
  const gateway = (code: string) =>
    accounts
      .filter((row) => row.owner === 'gateway' && row.code === code)
      .reduce((sum, row) => sum + Number(row.total), 0)
  const all = accounts.reduce((sum, row) => sum + Number(row.total), 0)
  const merchantTotal = accounts
    .filter((row) => row.owner !== 'gateway')
    .reduce((sum, row) => sum + Number(row.total), 0)
  const bankAccounts = accounts
    .filter((row) => row.owner === 'gateway' && row.code.startsWith('bank:'))
    .reduce((sum, row) => sum + Number(row.total), 0)

  const opening = merchants.reduce((sum, merchant) => sum + merchant.credited, 0)
  const deposits = [...load.linesImported.values()].reduce((sum, value) => sum + value, 0)
  let sent = 0
  for (const order of payouts) {
    if (received.get(order.platform_order_id)?.has('SUCCESS')) sent += Number(order.amount)
  }
  const books =
    merchantTotal +
    gateway('fee_revenue') +
    gateway('slot_adjustment') +
    gateway('deposit_clearing') +
    gateway('deposit_receivable')
  const bankSaw = opening + deposits - sent

  rows.push(['ledger sum (all accounts)', `${all} satang`])
  rows.push([
    'books',
    `merchants ${thb(merchantTotal)} + fees ${thb(gateway('fee_revenue'))} + slot ${thb(gateway('slot_adjustment'))} + unclaimed ${thb(gateway('deposit_clearing'))} + receivable ${thb(gateway('deposit_receivable'))} = ${thb(books)} THB`,
  ])
  rows.push([
    'bank saw',
    `opening ${thb(opening)} + deposits ${thb(deposits)} (${load.linesImported.size} lines) − payouts ${thb(sent)} = ${thb(bankSaw)} THB`,
  ])
  if (all !== 0) problems.push(`the ledger sums to ${all} satang, not 0`)
  if (books !== bankSaw)
    problems.push(`bank check: books ${thb(books)} THB, the bank saw ${thb(bankSaw)} THB`)
  if (-gateway('adjustments') !== opening)
    problems.push(
      `adjustments ${thb(-gateway('adjustments'))} THB, opening balances ${thb(opening)}`
    )
  if (-bankAccounts !== deposits)
    problems.push(`bank accounts hold ${thb(-bankAccounts)} THB, lines imported ${thb(deposits)}`)
  if (gateway('payout_clearing') !== sent)
    problems.push(
      `payout_clearing ${thb(gateway('payout_clearing'))} THB, payouts told SUCCESS ${thb(sent)}`
    )

  // Fees: what the orders say the gateway earned.
  let fees = 0
  for (const order of payments) if (order.status !== 'error') fees += Number(order.fee ?? 0)
  for (const order of payouts) if (order.status === 'success') fees += Number(order.fee ?? 0)
  if (fees !== gateway('fee_revenue'))
    problems.push(`fee_revenue ${thb(gateway('fee_revenue'))} THB, orders' fees ${thb(fees)}`)

  // Per merchant: the projection and the ledger against the orders.
  const balances = await patientQuery(
    target,
    'SELECT merchant_id, balance, freeze_balance, unsettle_balance FROM merchant_balances'
  )
  for (const merchant of merchants) {
    let expected = merchant.credited
    for (const order of payments) {
      if (Number(order.merchant_id) === merchant.id && order.status !== 'error') {
        expected += Number(order.amount) - Number(order.fee ?? 0)
      }
    }
    for (const order of payouts) {
      if (Number(order.merchant_id) === merchant.id && order.status === 'success') {
        expected -= Number(order.amount) + Number(order.fee ?? 0)
      }
    }
    const row = balances.find((b) => Number(b.merchant_id) === merchant.id)
    const held = Number(row?.balance) + Number(row?.freeze_balance) + Number(row?.unsettle_balance)
    const ledger = accounts
      .filter((account) => account.owner === String(merchant.id))
      .reduce((sum, account) => sum + Number(account.total), 0)
    rows.push([
      `merchant ${merchant.label}`,
      `opening ${thb(merchant.credited)}, now ${thb(held)} THB (ledger ${thb(ledger)}), orders say ${thb(expected)}`,
    ])
    if (held !== expected || ledger !== expected) {
      problems.push(
        `merchant ${merchant.label}: balance ${thb(held)}, ledger ${thb(ledger)}, orders say ${thb(expected)} THB`
      )
    }
    if (Number(row?.freeze_balance) !== 0)
      problems.push(
        `merchant ${merchant.label}: ${thb(Number(row?.freeze_balance))} THB still frozen`
      )
  }
  return { problems, rows }
}
