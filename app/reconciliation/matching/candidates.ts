import db from '@adonisjs/lucid/services/db'
import { DateTime } from 'luxon'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import type {
  ChainableContract,
  RawBuilderContract,
  ReferenceBuilderContract,
} from '@adonisjs/lucid/types/querybuilder'
import PaymentOrder from '#payments/models/payment_order'
import PayoutOrder from '#payouts/models/payout_order'
import { openConfirmations } from '#payouts/payout_confirmations'
import { bankReference, claimsOfTransfers, openReceivables } from '#reconciliation/receipts'
import type { LineRow } from '#reconciliation/matching/line_row'
import {
  candidateKey,
  isPayoutReference,
  orderOf,
  SLACK_SECONDS,
  type Candidates,
  type RuleOrder,
} from '#reconciliation/matching/rules'

/** The payment_orders columns `judgeLine` reads. */
const RULE_COLUMNS = [
  'id',
  'deposit_account_id',
  'merchant_id',
  'payment_reference',
  'platform_order_id',
  'transfer_amount',
  'slot_amount',
  'status',
  'status_before_freeze',
  'order_at',
  'expire_at',
]

/**
 * Reads the orders `judgeLine` needs for these lines, in a few queries
 * whatever their number. Without `lock` only the columns the rules read are
 * read, as plain rows (`RuleOrder`: nothing is paid from them). With
 * `lock`, inside a transaction, the payment orders a line could pay are
 * locked (FOR UPDATE) as they are read, whole, as models, so that what the
 * rules decide on them holds until the commit. Expired orders are final
 * and only named in a note: they are read without a lock.
 */
export async function findCandidates(
  client: QueryClientContract,
  lines: LineRow[],
  options: { lock: true }
): Promise<Candidates<PaymentOrder>>
export async function findCandidates(
  client: QueryClientContract,
  lines: LineRow[],
  options: { lock: boolean }
): Promise<Candidates<RuleOrder>>
export async function findCandidates(
  client: QueryClientContract,
  lines: LineRow[],
  options: { lock: boolean }
): Promise<Candidates<RuleOrder>> {
  const read: OrderReader<RuleOrder> = options.lock
    ? (filter) => filter(PaymentOrder.query({ client })).orderBy('id').forUpdate()
    : async (filter) =>
        (await filter(client.from('payment_orders')).orderBy('id').select(RULE_COLUMNS)).map(
          ruleOrder
        )
  return readCandidates(client, lines, options, read)
}

/** Reads the payment orders a filter selects, in id order. */
type OrderReader<Order extends RuleOrder> = (
  filter: <Query extends ChainableContract>(query: Query) => Query
) => Promise<Order[]>

/** A payment_orders row of RULE_COLUMNS, as the model would give those columns. */
function ruleOrder(row: Record<string, any>): RuleOrder {
  return {
    id: Number(row.id),
    depositAccountId: Number(row.deposit_account_id),
    merchantId: Number(row.merchant_id),
    paymentReference: row.payment_reference,
    platformOrderId: row.platform_order_id,
    transferAmount: Number(row.transfer_amount),
    slotAmount: row.slot_amount === null ? null : Number(row.slot_amount),
    status: row.status,
    statusBeforeFreeze: row.status_before_freeze,
    orderAt: DateTime.fromJSDate(row.order_at),
    expireAt: DateTime.fromJSDate(row.expire_at),
  }
}

async function readCandidates<Order extends RuleOrder>(
  client: QueryClientContract,
  lines: LineRow[],
  options: { lock: boolean },
  readOrders: OrderReader<Order>
): Promise<Candidates<Order>> {
  const candidates: Candidates<Order> = {
    byReference: new Map(),
    bySlot: new Map(),
    expired: new Map(),
    payouts: new Map(),
    receivables: [],
    confirmations: [],
    transfers: new Map(),
  }
  const payoutRefs = new Set<string>()
  const refs = new Set<string>()
  const accounts = new Set<number>()
  const creditAmounts = new Set<number>()
  const credits: LineRow[] = []
  const debitAccounts = new Set<number>()
  for (const line of lines) {
    if (isPayoutReference(line.reference)) {
      payoutRefs.add(line.reference)
      continue
    }
    if (line.direction !== 'credit') {
      debitAccounts.add(line.deposit_account_id)
      continue
    }
    credits.push(line)
    accounts.add(line.deposit_account_id)
    creditAmounts.add(line.amount)
    if (line.reference) refs.add(line.reference)
  }
  // One object per order, whichever way it was found: what paying it changes
  // (status, slot) is seen by the next line judged against it.
  const seen = new Map<number, Order>()
  const one = (order: Order) => {
    const known = seen.get(order.id)
    if (known) return known
    seen.set(order.id, order)
    return order
  }
  const lockIf = <Query extends { forUpdate(): Query }>(query: Query) =>
    options.lock ? query.forUpdate() : query

  if (refs.size > 0) {
    const referenced = await readOrders((query) =>
      query
        .whereIn('deposit_account_id', [...accounts])
        .where((inner) =>
          inner.whereIn('payment_reference', [...refs]).orWhereIn('platform_order_id', [...refs])
        )
    )
    for (const order of referenced) {
      const model = one(order)
      // References compare case-sensitively, in the database as here.
      for (const reference of [order.paymentReference, order.platformOrderId]) {
        if (!reference || !refs.has(reference)) continue
        const name = candidateKey(order.depositAccountId, reference)
        if (!candidates.byReference.has(name)) candidates.byReference.set(name, model)
      }
    }
  }
  if (credits.length > 0) {
    const holders = await readOrders((query) =>
      query.whereIn('deposit_account_id', [...accounts]).whereIn('slot_amount', [...creditAmounts])
    )
    for (const order of holders) {
      candidates.bySlot.set(candidateKey(order.depositAccountId, order.slotAmount!), one(order))
    }

    candidates.expired = await latePayments(client, latePaymentsAsked(credits, candidates))
  }
  // After the orders: the lock order of every payment decision (order, then its claims).
  if (credits.length > 0) {
    candidates.receivables = await openReceivables(client, [...accounts], options)
    candidates.transfers = await claimsOfTransfers(
      client,
      credits.map(bankReference).filter((transfer): transfer is string => transfer !== null)
    )
  }
  if (payoutRefs.size > 0) {
    const payouts = await lockIf(
      PayoutOrder.query({ client }).whereIn('platform_order_id', [...payoutRefs])
    )
    for (const payout of payouts) candidates.payouts.set(payout.platformOrderId, payout)
  }
  candidates.confirmations = await openConfirmations(
    client,
    {
      payoutOrderIds: [...candidates.payouts.values()]
        .filter((payout) => payout.status === 'success')
        .map((payout) => payout.id),
      accountIds: [...debitAccounts],
    },
    options
  )
  return candidates
}

/**
 * The credits the late-payment rule may be asked about (`judgeLine` reads
 * `expired` only for a line no order claims): those no order claims, and
 * those whose order another credit of the batch could take first (paying
 * it in memory frees its slot, settle.ts, and the next line finds none).
 */
function latePaymentsAsked(credits: LineRow[], candidates: Candidates<RuleOrder>) {
  const claimants = new Map<number, number>()
  for (const line of credits) {
    const order = orderOf(line, candidates)
    if (order) claimants.set(order.id, (claimants.get(order.id) ?? 0) + 1)
  }
  return credits.filter((line) => {
    const order = orderOf(line, candidates)
    return !order || claimants.get(order.id)! > 1
  })
}

/**
 * Line id → the most recent expired order each credit could be a late
 * payment for, by the lines' own terms (as JSON rows: the lines need not be
 * stored yet): one indexed lookup per line, for the lines whose account
 * has an expired order of their amount at all (one indexed read first).
 */
async function latePayments(client: QueryClientContract, credits: LineRow[]) {
  const found = new Map<number, string>()
  if (credits.length === 0) return found
  const held = await client
    .from('payment_orders')
    .whereIn('deposit_account_id', [...new Set(credits.map((line) => line.deposit_account_id))])
    .whereIn('transfer_amount', [...new Set(credits.map((line) => line.amount))])
    .where('status', 'error')
    .distinct('deposit_account_id', 'transfer_amount')
  const expiredAmounts = new Set(
    held.map((row) => candidateKey(Number(row.deposit_account_id), Number(row.transfer_amount)))
  )
  const asked = credits.filter((line) =>
    expiredAmounts.has(candidateKey(line.deposit_account_id, line.amount))
  )
  if (asked.length === 0) return found
  const latePayment = expiredBefore(client.from('payment_orders'), lineColumns())
    .select('payment_orders.platform_order_id')
    .orderBy('payment_orders.order_at', 'desc')
    .limit(1)
    .toSQL()
  const [expired] = await client.rawQuery(
    `SELECT line.id, (${latePayment.sql}) AS expired_order
       FROM JSON_TABLE(?, '$[*]' COLUMNS (id BIGINT PATH '$[0]',
         deposit_account_id BIGINT PATH '$[1]', amount BIGINT PATH '$[2]',
         line_at DATETIME(3) PATH '$[3]')) AS line`,
    [
      ...(latePayment.bindings as any[]),
      JSON.stringify(
        asked.map((line) => [
          line.id,
          line.deposit_account_id,
          line.amount,
          line.line_at.toISOString().slice(0, 23).replace('T', ' '),
        ])
      ),
    ]
  )
  for (const row of expired as Array<{ id: number | string; expired_order: string | null }>) {
    if (row.expired_order) found.set(Number(row.id), row.expired_order)
  }
  return found
}

/**
 * A statement line's terms as columns of the `line` rows, for the
 * late-payment rule evaluated for many lines in one query.
 */
interface LineTerms {
  accountId: ReferenceBuilderContract
  amount: ReferenceBuilderContract
  /** The line's time plus the slack. */
  latest: RawBuilderContract
}

function lineColumns(): LineTerms {
  return {
    accountId: db.ref('line.deposit_account_id'),
    amount: db.ref('line.amount'),
    latest: db.raw(`line.line_at + INTERVAL ${SLACK_SECONDS} SECOND`),
  }
}

/**
 * Expired orders (status error, however long ago) on the line's account with
 * the line's amount as transfer_amount, created before the line (+ slack):
 * the line is a late payment for one of them.
 */
function expiredBefore<Query extends ChainableContract>(query: Query, line: LineTerms) {
  return query
    .where('payment_orders.deposit_account_id', line.accountId)
    .where('payment_orders.transfer_amount', line.amount)
    .where('payment_orders.status', 'error')
    .where('payment_orders.order_at', '<=', line.latest)
}
