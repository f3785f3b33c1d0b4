import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import type { QueryClientContract, TransactionClientContract } from '@adonisjs/lucid/types/database'
import type {
  ChainableContract,
  RawBuilderContract,
  ReferenceBuilderContract,
} from '@adonisjs/lucid/types/querybuilder'
import PaymentOrder from '#payments/models/payment_order'
import PayoutOrder from '#payouts/models/payout_order'
import PaymentSlip from '#slips/models/payment_slip'
import { slipReviewSnapshot } from '#slips/slip_review'
import { clearAssignment } from '#review/assignments'
import { recordAudit } from '#core/audit'
import { SYSTEM } from '#core/actor'
import { completePayout } from '#payouts/actions/complete_payout'
import { isAtTheBank } from '#payouts/at_the_bank'
import { claimPayoutReturn, linkReturnPosting } from '#payouts/payout_returns'
import { isPlatformOrderId } from '#core/order_ids'
import { withDeadlockRetry } from '#core/db_retry'
import {
  takePayment,
  writePayments,
  writeReceivableClearings,
  type LinePayment,
  type ReceivableClearing,
} from '#reconciliation/line_payments'
import {
  bankReference,
  claimsOfTransfers,
  openReceivables,
  ReceiptClaimedError,
  type OpenReceivable,
  type ReceiptClaim,
} from '#reconciliation/receipts'
import {
  confirmWithLine,
  openConfirmations,
  type PayoutConfirmation,
} from '#payouts/payout_confirmations'

export type MatchResult = 'matched' | 'unmatched' | 'late' | 'skipped'

/** Statement times are minute-precise; slots are matched with this much slack. */
const SLACK_SECONDS = 60

/** The note of a line no order can claim, by direction. */
export const NO_ORDER_NOTE = {
  credit: 'no open order',
  debit: 'debit without a payout reference',
} as const

/** A `statement_lines` row as the matcher reads it. */
export interface LineRow {
  id: number
  deposit_account_id: number
  line_at: Date
  direction: 'credit' | 'debit'
  amount: number
  reference: string | null
  /** The bank's transaction reference (a slip's transRef), when the statement has one. */
  trans_ref: string | null
  /** The transfer's identity (statements.ts, transferKey), when read. */
  transfer_key?: string | null
  status: string
}

/** The columns of a line the matcher reads. */
export const LINE_COLUMNS = [
  'id',
  'deposit_account_id',
  'line_at',
  'direction',
  'amount',
  'reference',
  'trans_ref',
  'transfer_key',
  'status',
]

export function toLineRow(row: Record<string, any>): LineRow {
  return {
    id: Number(row.id),
    deposit_account_id: Number(row.deposit_account_id),
    line_at: new Date(row.line_at),
    direction: row.direction,
    amount: Number(row.amount),
    reference: row.reference,
    trans_ref: row.trans_ref ?? null,
    transfer_key: row.transfer_key ?? null,
    status: row.status,
  }
}

/**
 * Everything the rules read about the orders that could claim some lines,
 * fetched for all of them at once (`findCandidates`). One line or a
 * thousand: the same queries, then `judgeLine` per line in memory.
 */
export interface Candidates {
  /** Payment orders by `account|reference` (payment_reference or platform_order_id). */
  byReference: Map<string, PaymentOrder>
  /** Open or frozen payment orders by `account|slot_amount` (unique per account). */
  bySlot: Map<string, PaymentOrder>
  /** Line id → platform_order_id of the most recent expired order it pays late. */
  expired: Map<number, string>
  /** Bulk-file payouts by platform_order_id. */
  payouts: Map<string, PayoutOrder>
  /**
   * Open receivables of the lines' accounts: payments credited before their
   * line arrived, waiting for it (one is cleared by one line at most).
   */
  receivables: OpenReceivable[]
  /**
   * Open transfers out a debit line could confirm: payouts named by the
   * lines that succeeded without their line, returns to payers waiting on
   * the lines' accounts.
   */
  confirmations: PayoutConfirmation[]
  /** The claims holding the credit lines' bank transfers, by transfer (any account). */
  transfers?: Map<string, ReceiptClaim & { platformOrderId: string | null }>
}

/** What the rules decide for one line. */
export type Judgement =
  | { result: 'matched'; order: PaymentOrder }
  | { result: 'matched'; payout: PayoutOrder }
  /** The line of a payment credited before it: it clears the receivable. */
  | { result: 'matched'; receivable: OpenReceivable }
  /** The debit of a transfer already made (a payout, a return): it confirms it. */
  | { result: 'matched'; confirmation: PayoutConfirmation; payout?: PayoutOrder }
  | {
      result: 'unmatched' | 'late'
      note: string
      /** The order the verdict is about (its state decided it), if any. */
      order?: PaymentOrder
    }

export function isPayoutReference(reference: string | null): reference is string {
  return !!reference && (isPlatformOrderId(reference, 'W') || isPlatformOrderId(reference, 'M'))
}

const key = (accountId: number, value: string | number) => `${accountId}|${value}`

/**
 * The matching rules (docs/reconciliation.md, "Matching rules"), one line at
 * a time, on orders already read:
 *
 * Credit lines first clear the receivable of a payment credited before its
 * line arrived (named by the slip's transaction reference, or by the order's
 * reference); then they pay the open payment order named by their
 * reference, or else the open order on this account holding the same
 * transfer_amount whose slot (order time to expiry, ±1 minute) covers the
 * line's time, or else the one receivable expecting that amount at that
 * time. A payment for an order that has already expired is "late"; anything
 * else (two claimants included) waits in "unmatched" for an operator. Debit
 * lines confirm bulk-file payouts named by their reference; a credit naming
 * a payout is that transfer coming back. Either must carry the payout's
 * amount, or it waits in "unmatched" for an operator.
 */
export function judgeLine(line: LineRow, candidates: Candidates): Judgement {
  if (isPayoutReference(line.reference)) {
    const payout = candidates.payouts.get(line.reference)
    const sent = payout && line.direction === 'debit' && sentWithoutLine(payout, candidates)
    if (sent) {
      return sent.amount === line.amount
        ? { result: 'matched', confirmation: sent, payout }
        : { result: 'unmatched', note: `${line.reference}: sent ${sent.amount} satang` }
    }
    if (!payout || !isAtTheBank(payout)) {
      return { result: 'unmatched', note: `${line.reference}: no pending bulk-file payout` }
    }
    // The bank's file sends the payout's amount, and a return brings it back whole:
    // another amount is not this transfer (a 1.00 credit must not refund 1,000.00).
    if (line.amount !== payout.amount) {
      return {
        result: 'unmatched',
        note:
          line.direction === 'debit'
            ? `${line.reference}: the bank file sends ${payout.amount} satang`
            : `${line.reference}: a return of ${payout.amount} satang is expected`,
      }
    }
    return { result: 'matched', payout }
  }
  if (line.direction === 'debit') {
    // A return to a payer, made in the bank's portal: its debit carries no reference of ours.
    const returns = candidates.confirmations.filter(
      (confirmation) =>
        confirmation.path === 'return' &&
        confirmation.statementLineId === null &&
        confirmation.depositAccountId === line.deposit_account_id &&
        confirmation.amount === line.amount
    )
    if (returns.length === 1) return { result: 'matched', confirmation: returns[0] }
    if (returns.length > 1) {
      return {
        result: 'unmatched',
        note: `the returns of lines ${returns.map((r) => `#${r.returnedLineId}`).join(' and ')} both send this amount`,
      }
    }
    return { result: 'unmatched', note: NO_ORDER_NOTE.debit }
  }

  const taken = transferTakenElsewhere(line, candidates)
  if (taken) return { result: 'unmatched', note: taken }

  const named = namedOrder(line, candidates)
  const owed = receivableNamedBy(line, candidates)
  if (owed) return clearing(line, owed)

  const order = named ?? slotHolder(line, candidates)
  if (!order) {
    const expected = receivablesExpecting(line, candidates)
    if (expected.length === 1) return clearing(line, expected[0])
    if (expected.length > 1) {
      return {
        result: 'unmatched',
        note: `credited before their line, ${expected.map((r) => r.platformOrderId).join(' and ')} both expect this amount`,
      }
    }
    const expired = candidates.expired.get(line.id)
    return expired
      ? { result: 'late', note: expired }
      : { result: 'unmatched', note: NO_ORDER_NOTE.credit }
  }
  if (order.status === 'error') {
    // The customer paid an order that had already expired (error is final).
    return { result: 'late', note: order.platformOrderId, order }
  }
  if (order.status !== 'open') {
    return { result: 'unmatched', note: `${order.platformOrderId} is ${order.status}`, order }
  }
  if (order.transferAmount !== line.amount) {
    return {
      result: 'unmatched',
      note: `${order.platformOrderId} expects ${order.transferAmount} satang`,
      order,
    }
  }
  if (!named) {
    // The slot's order and a receivable both wait for this amount at this time: an operator decides.
    const expected = receivablesExpecting(line, candidates)
    if (expected.length > 0) {
      return {
        result: 'unmatched',
        note: `${order.platformOrderId} and ${expected.map((r) => r.platformOrderId).join(', ')} (credited before their line) both expect this amount`,
        order,
      }
    }
  }
  return { result: 'matched', order }
}

/** The payout's open transfer (it succeeded, its debit line has not come), if any. */
function sentWithoutLine(payout: PayoutOrder, candidates: Candidates) {
  if (payout.status !== 'success') return undefined
  return candidates.confirmations.find(
    (confirmation) =>
      confirmation.payoutOrderId === payout.id && confirmation.statementLineId === null
  )
}

function namedOrder(line: LineRow, candidates: Candidates) {
  return line.reference
    ? candidates.byReference.get(key(line.deposit_account_id, line.reference))
    : undefined
}

/**
 * The open receivable the line names, whatever its amount: by the slip's
 * transaction reference, or by the reference of the order credited.
 */
export function receivableNamedBy(line: LineRow, candidates: Candidates) {
  const named = namedOrder(line, candidates)
  return (
    receivableByTransRef(line, candidates) ??
    (named ? receivableOf(named.id, line, candidates) : undefined)
  )
}

/**
 * Why the line's bank transfer is no longer anyone's to take: another
 * claim holds it (a line of it on another account, or a slip's receivable
 * there), unless it is the receivable on the line's own account that the
 * line clears.
 */
function transferTakenElsewhere(line: LineRow, candidates: Candidates) {
  const transfer = bankReference(line)
  const holder = transfer ? candidates.transfers?.get(transfer) : undefined
  if (!holder || holder.statementLineId === line.id) return undefined
  if (holder.statementLineId === null && holder.depositAccountId === line.deposit_account_id) {
    return undefined
  }
  const of = holder.platformOrderId ? ` of ${holder.platformOrderId}` : ''
  return `the transfer ${transfer} was already claimed (claim ${holder.id}, ${holder.path}${of})`
}

/** A receivable the line names: it clears it when it brings the amount expected. */
function clearing(line: LineRow, receivable: OpenReceivable): Judgement {
  if (receivable.expectedAmount !== line.amount) {
    return {
      result: 'unmatched',
      note: `${receivable.platformOrderId} was credited before its line, for ${receivable.expectedAmount} satang`,
    }
  }
  return { result: 'matched', receivable }
}

const stillOpen = (receivable: OpenReceivable) => receivable.statementLineId === null

/** The open receivable on the line's account that a slip named with the line's transaction reference. */
function receivableByTransRef(line: LineRow, candidates: Candidates) {
  if (!line.trans_ref) return undefined
  return candidates.receivables.find(
    (receivable) =>
      stillOpen(receivable) &&
      receivable.depositAccountId === line.deposit_account_id &&
      receivable.transRef === line.trans_ref
  )
}

/**
 * The open receivable of an order (on the line's account), unless its slip
 * named another bank transfer than the line's: that receivable waits for
 * its own line.
 */
function receivableOf(orderId: number, line: LineRow, candidates: Candidates) {
  const transfer = bankReference(line)
  return candidates.receivables.find(
    (receivable) =>
      stillOpen(receivable) &&
      receivable.paymentOrderId === orderId &&
      receivable.depositAccountId === line.deposit_account_id &&
      (receivable.transRef === null || transfer === null || receivable.transRef === transfer)
  )
}

/**
 * The open receivables on the line's account that expect its amount at its
 * time (their transfer's window, from the slip or the order), and that no
 * slip transaction names (those wait for their own line).
 */
function receivablesExpecting(line: LineRow, candidates: Candidates) {
  const at = line.line_at.getTime()
  return candidates.receivables.filter(
    (receivable) =>
      stillOpen(receivable) &&
      receivable.depositAccountId === line.deposit_account_id &&
      receivable.expectedAmount === line.amount &&
      (receivable.transRef === null || line.trans_ref === null) &&
      receivable.expectedFrom !== null &&
      receivable.expectedTo !== null &&
      receivable.expectedFrom.getTime() <= at &&
      at <= receivable.expectedTo.getTime()
  )
}

/**
 * The order on the line's account holding the line's amount as its
 * transfer_amount slot (unique per account: an open or frozen order), whose
 * slot covers the line's time: order_at − slack ≤ line time ≤ expire_at + slack.
 */
function slotHolder(line: LineRow, candidates: Candidates) {
  const order = candidates.bySlot.get(key(line.deposit_account_id, line.amount))
  if (!order || order.slotAmount !== line.amount) return undefined
  if (order.depositAccountId !== line.deposit_account_id) return undefined
  const at = line.line_at.getTime()
  const slack = SLACK_SECONDS * 1000
  if (order.orderAt.toMillis() > at + slack) return undefined
  if (order.expireAt.toMillis() < at - slack) return undefined
  return order
}

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
 * read. With `lock`, inside a transaction, the payment
 * orders a line could pay are locked (FOR UPDATE) as they are read, so that
 * what the rules decide on them holds until the commit. Expired orders are
 * final and only named in a note: they are read without a lock.
 */
export async function findCandidates(
  client: QueryClientContract,
  lines: LineRow[],
  options: { lock: boolean }
): Promise<Candidates> {
  const candidates: Candidates = {
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
  // One model per order, whichever way it was found: what paying it changes
  // (status, slot) is seen by the next line judged against it.
  const seen = new Map<number, PaymentOrder>()
  const one = (order: PaymentOrder) => {
    const known = seen.get(order.id)
    if (known) return known
    seen.set(order.id, order)
    return order
  }
  const lockIf = <Query extends { forUpdate(): Query }>(query: Query) =>
    options.lock ? query.forUpdate() : query
  // Read only to be judged: the columns the rules read. Locked, to be paid: whole.
  const orders = () =>
    options.lock
      ? PaymentOrder.query({ client })
      : PaymentOrder.query({ client }).select(RULE_COLUMNS)

  if (refs.size > 0) {
    const referenced = await lockIf(
      orders()
        .whereIn('deposit_account_id', [...accounts])
        .where((query) =>
          query.whereIn('payment_reference', [...refs]).orWhereIn('platform_order_id', [...refs])
        )
        .orderBy('id')
    )
    for (const order of referenced) {
      const model = one(order)
      // References compare case-sensitively, in the database as here.
      for (const reference of [order.paymentReference, order.platformOrderId]) {
        if (!reference || !refs.has(reference)) continue
        const name = key(order.depositAccountId, reference)
        if (!candidates.byReference.has(name)) candidates.byReference.set(name, model)
      }
    }
  }
  if (credits.length > 0) {
    const holders = await lockIf(
      orders()
        .whereIn('deposit_account_id', [...accounts])
        .whereIn('slot_amount', [...creditAmounts])
        .orderBy('id')
    )
    for (const order of holders) {
      candidates.bySlot.set(key(order.depositAccountId, order.slotAmount!), one(order))
    }

    // The most recent expired order each credit could be a late payment for,
    // by the lines' own terms (as JSON rows: the lines need not be stored
    // yet): one indexed lookup per line.
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
          credits.map((line) => [
            line.id,
            line.deposit_account_id,
            line.amount,
            line.line_at.toISOString().slice(0, 23).replace('T', ' '),
          ])
        ),
      ]
    )
    for (const row of expired as Array<{ id: number | string; expired_order: string | null }>) {
      if (row.expired_order) candidates.expired.set(Number(row.id), row.expired_order)
    }
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

/**
 * Matches one new statement line, in its own transaction with the line row
 * locked: a line is matched once even if two workers try, and the unique
 * (order_type, order_id) key stops an order from being settled by two lines.
 */
export async function matchStatementLine(lineId: number): Promise<MatchResult> {
  const results = await matchLines([lineId])
  return results.get(lineId) ?? 'skipped'
}

/**
 * Judges and settles these lines in one transaction: the lines are locked
 * first (a line judged by someone else meanwhile is `skipped`), then the
 * orders they could pay (`findCandidates` with lock), so the rules decide on
 * rows nobody else can change until the commit: an order paid or expired by
 * another path since the caller last looked is judged as it is now. The
 * orders the lines pay are written together (line_payments.ts: their
 * postings, slots, callback rows, states and events in a few statements) and
 * commit with their lines' status. A deadlock rolls the whole attempt back;
 * running it again is safe.
 */
export async function matchLines(lineIds: number[]): Promise<Map<number, MatchResult>> {
  return withDeadlockRetry(() =>
    db.transaction((trx) => settleLines(trx, lineIds), { isolationLevel: 'read committed' })
  )
}

/** matchLines in the caller's transaction (read committed). */
export async function settleLines(
  trx: TransactionClientContract,
  lineIds: number[]
): Promise<Map<number, MatchResult>> {
  const results = new Map<number, MatchResult>()
  const rows = await trx
    .from('statement_lines')
    .whereIn('id', lineIds)
    .orderBy('id')
    .forUpdate()
    .select(LINE_COLUMNS)
  const lines: LineRow[] = []
  for (const row of rows) {
    const line = toLineRow(row)
    if (line.status === 'new') lines.push(line)
    else results.set(line.id, 'skipped')
  }
  if (lines.length === 0) return results

  const candidates = await findCandidates(trx, lines, { lock: true })
  const verdicts: Array<{ id: number; status: 'unmatched' | 'late'; note: string }> = []
  const paid: Array<{ line: LineRow; order: PaymentOrder }> = []
  const payments: LinePayment[] = []
  const clearings: ReceivableClearing[] = []
  for (const line of lines) {
    const judgement = judgeLine(line, candidates)
    if ('confirmation' in judgement) {
      await confirmWithLine(trx, judgement.confirmation, line)
      await confirmedLine(trx, line, judgement.confirmation, judgement.payout)
    } else if ('payout' in judgement) {
      const refused = await settlePayoutLine(trx, line, judgement.payout)
      if (refused) {
        // Its money was taken by another decision: the payout stays as it is, for an operator.
        verdicts.push({ id: line.id, status: 'unmatched', note: refused })
        results.set(line.id, 'unmatched')
        continue
      }
    } else if ('receivable' in judgement) {
      // Cleared in memory now: the next line of the batch finds it taken.
      judgement.receivable.statementLineId = line.id
      clearings.push({ line, receivable: judgement.receivable })
    } else if (judgement.result === 'matched') {
      // Paid in memory now (the next line finds it so), written below with the others.
      payments.push(takePayment(line, judgement.order))
      paid.push({ line, order: judgement.order })
    } else {
      verdicts.push({ id: line.id, status: judgement.result, note: judgement.note })
    }
    results.set(line.id, judgement.result)
  }
  await markMatched(trx, [
    ...paid.map(({ line, order }) => ({
      lineId: line.id,
      orderType: 'payment',
      orderId: order.id,
    })),
    ...clearings.map(({ line, receivable }) => ({
      lineId: line.id,
      orderType: 'payment',
      orderId: receivable.paymentOrderId!,
    })),
  ])
  await setLines(trx, verdicts)
  await closeSlipsPaidByStatement(trx, paid)
  await writeReceivableClearings(trx, clearings)
  // Last: its postings lock the merchants' balance rows until the commit.
  await writePayments(trx, payments)
  return results
}

/**
 * The slips of orders statement lines just paid that no operator had
 * decided on are closed as approved by the statement (no reviewer, reason
 * seen_on_statement), each with its audit row, and leave the slip queue:
 * the credit on the statement is the evidence they were waiting for.
 */
async function closeSlipsPaidByStatement(
  trx: TransactionClientContract,
  paid: Array<{ line: LineRow; order: PaymentOrder }>
) {
  if (paid.length === 0) return
  const byOrder = new Map(paid.map((item) => [item.order.id, item]))
  const slips = await PaymentSlip.query({ client: trx })
    .whereIn('payment_order_id', [...byOrder.keys()])
    .whereNull('review_decision')
    .orderBy('id')
    .forUpdate()
  for (const slip of slips) {
    const { line, order } = byOrder.get(slip.paymentOrderId)!
    const comment = `approved by statement line ${line.id}`
    const before = slipReviewSnapshot(slip)
    slip.merge({
      reviewedBy: null,
      reviewedAt: DateTime.utc(),
      reviewDecision: 'approved',
      reviewReasonCode: 'seen_on_statement',
      reviewComment: comment,
    })
    await slip.useTransaction(trx).save()
    await clearAssignment(trx, 'slips', slip.id)
    await recordAudit(trx, SYSTEM, {
      action: 'slip.review',
      target: { type: 'slip', id: String(slip.id) },
      before,
      after: slipReviewSnapshot(slip),
      reason: { code: 'seen_on_statement', comment },
      details: { platform_order_id: order.platformOrderId, statement_line_id: line.id },
    })
  }
}

/** A debit line that confirmed a transfer already made: matched to its payout, or noted as a return. */
async function confirmedLine(
  trx: TransactionClientContract,
  line: LineRow,
  confirmation: PayoutConfirmation,
  payout: PayoutOrder | undefined
) {
  if (payout) {
    await markMatched(trx, [{ lineId: line.id, orderType: payout.kind, orderId: payout.id }])
    return
  }
  await trx
    .from('statement_lines')
    .where('id', line.id)
    .update({
      status: 'matched',
      note: `return of statement line #${confirmation.returnedLineId}`,
      matched_at: new Date(),
    })
}

/**
 * A line naming a bulk-file payout with its amount settles it: a debit
 * completes it, a credit is its return, which claims the line (its money
 * gave the merchant the hold back) before failing the payout. Returns why
 * not when another decision already took the credit's money.
 */
async function settlePayoutLine(
  trx: TransactionClientContract,
  line: LineRow,
  order: PayoutOrder
): Promise<string | null> {
  const outcome =
    line.direction === 'debit'
      ? { success: true as const }
      : { success: false as const, reason: 'returned_by_bank' }
  if (!outcome.success) {
    try {
      await claimPayoutReturn(trx, { line, payout: order, actor: SYSTEM })
    } catch (error) {
      // Only the INSERT failed; the batch's transaction goes on without this line.
      if (!(error instanceof ReceiptClaimedError)) throw error
      return `${line.reference}: ${error.message}`
    }
  }
  await completePayout(order.id, outcome, {
    client: trx,
    reason: `statement line ${line.id}`,
    // The statement itself says the money left: confirmed by this line.
    sentBy: { line: { id: line.id, depositAccountId: line.deposit_account_id } },
  })
  if (!outcome.success) await linkReturnPosting(trx, line.id, order)
  // Final now: another line naming it finds no pending payout.
  order.status = outcome.success ? 'success' : 'failed'
  await markMatched(trx, [{ lineId: line.id, orderType: order.kind, orderId: order.id }])
  return null
}

async function markMatched(
  trx: TransactionClientContract,
  matches: Array<{ lineId: number; orderType: string; orderId: number }>
) {
  if (matches.length === 0) return
  const cases = `CASE id ${matches.map(() => 'WHEN ? THEN ?').join(' ')} END`
  await trx.rawQuery(
    `UPDATE statement_lines SET status = 'matched', order_type = ${cases}, order_id = ${cases},
       matched_at = ? WHERE id IN (${matches.map(() => '?').join(', ')})`,
    [
      ...matches.flatMap((match) => [match.lineId, match.orderType]),
      ...matches.flatMap((match) => [match.lineId, match.orderId]),
      new Date(),
      ...matches.map((match) => match.lineId),
    ]
  )
}

/**
 * Gives lines their verdicts, one UPDATE per distinct verdict and note (most
 * lines share one: "no open order"); returns how many were still new.
 */
export async function setLines(
  client: QueryClientContract,
  verdicts: Array<{ id: number; status: 'unmatched' | 'late'; note: string }>
) {
  const groups = new Map<string, { status: string; note: string; ids: number[] }>()
  for (const verdict of verdicts) {
    const note = verdict.note.slice(0, 255)
    const name = `${verdict.status}|${note}`
    const group = groups.get(name) ?? { status: verdict.status, note, ids: [] }
    group.ids.push(verdict.id)
    groups.set(name, group)
  }
  let changed = 0
  for (const { status, note, ids } of groups.values()) {
    const [result] = await client.rawQuery(
      `UPDATE statement_lines SET status = ?, note = ?
         WHERE id IN (${ids.map(() => '?').join(', ')}) AND status = 'new'`,
      [status, note, ...ids]
    )
    changed += Number(result.affectedRows)
  }
  return changed
}
