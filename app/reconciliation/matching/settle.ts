import { DateTime } from 'luxon'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type PayoutOrder from '#payouts/models/payout_order'
import { takePayment, transitionPayments, type PaymentTaken } from '#payments/payment_state'
import { completePayoutByLine } from '#payouts/actions/complete_payout'
import { confirmWithLine, type PayoutConfirmation } from '#payouts/payout_confirmations'
import { approveSlipsSeenOnStatement } from '#slips/slip_decision'
import { SYSTEM } from '#core/actor'
import {
  LINE_COLUMNS,
  toLineRow,
  type LineRow,
  type MatchResult,
} from '#reconciliation/matching/line_row'
import { findCandidates } from '#reconciliation/matching/candidates'
import { judgeLine } from '#reconciliation/matching/rules'
import { markMatched, markReturnLine, setLines } from '#reconciliation/matching/line_status'
import {
  claimPaidLines,
  writeReceivableClearings,
  type ReceivableClearing,
} from '#reconciliation/matching/line_claims'

/**
 * matchLines in the caller's transaction (read committed): the lines are
 * locked first (a line judged by someone else meanwhile is `skipped`), then
 * the orders they could pay (`findCandidates` with lock), and each line is
 * judged (`judgeLine`). Each verdict is carried out by the domain it
 * concerns: a payout completes (completePayoutByLine) or its transfer is
 * confirmed, a payment is paid (takePayment now, so that the next line
 * finds it paid; transitionPayments for the batch below), the order's
 * undecided slips are approved by the statement. Reconciliation writes the
 * lines and their claims.
 */
export async function settleLines(
  trx: TransactionClientContract,
  lineIds: number[],
  options: {
    /** Called once the lines and everything they could claim are locked. */
    locked?: () => void
  } = {}
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
  options.locked?.()
  const verdicts: Array<{ id: number; status: 'unmatched' | 'late'; note: string }> = []
  const paid: Array<{ line: LineRow; payment: PaymentTaken }> = []
  const clearings: ReceivableClearing[] = []
  for (const line of lines) {
    const judgement = judgeLine(line, candidates)
    if ('confirmation' in judgement) {
      await confirmWithLine(trx, judgement.confirmation, line)
      await confirmedLine(trx, line, judgement.confirmation, judgement.payout)
    } else if ('payout' in judgement) {
      const refused = await completePayoutByLine(trx, line, judgement.payout)
      if (refused) {
        // Its money was taken by another decision: the payout stays as it is, for an operator.
        verdicts.push({ id: line.id, status: 'unmatched', note: refused })
        results.set(line.id, 'unmatched')
        continue
      }
      await markMatched(trx, [
        { lineId: line.id, orderType: judgement.payout.kind, orderId: judgement.payout.id },
      ])
    } else if ('receivable' in judgement) {
      // Cleared in memory now: the next line of the batch finds it taken.
      judgement.receivable.statementLineId = line.id
      clearings.push({ line, receivable: judgement.receivable })
    } else if (judgement.result === 'matched') {
      // Paid in memory now (the next line finds it so), written below with the others.
      const payment = takePayment(judgement.order, {
        paidAt: DateTime.fromJSDate(line.line_at),
        reason: `statement line ${line.id}`,
      })
      paid.push({ line, payment })
    } else {
      verdicts.push({ id: line.id, status: judgement.result, note: judgement.note })
    }
    results.set(line.id, judgement.result)
  }
  await markMatched(trx, [
    ...paid.map(({ line, payment }) => ({
      lineId: line.id,
      orderType: 'payment',
      orderId: payment.order.id,
    })),
    ...clearings.map(({ line, receivable }) => ({
      lineId: line.id,
      orderType: 'payment',
      orderId: receivable.paymentOrderId!,
    })),
  ])
  await setLines(trx, verdicts)
  await approveSlipsSeenOnStatement(
    trx,
    paid.map(({ line, payment }) => ({
      lineId: line.id,
      paymentOrderId: payment.order.id,
      platformOrderId: payment.order.platformOrderId,
    }))
  )
  await writeReceivableClearings(trx, clearings)
  await payLines(trx, paid)
  return results
}

/**
 * The orders the lines paid, written together: last, because their postings
 * lock the merchants' balance rows until the commit; then each line's claim.
 */
async function payLines(
  trx: TransactionClientContract,
  paid: Array<{ line: LineRow; payment: PaymentTaken }>
) {
  if (paid.length === 0) return
  const now = DateTime.utc()
  const postings = await transitionPayments(
    trx,
    paid.map(({ payment }) => payment),
    { to: 'unsettled_paid', actor: SYSTEM, now }
  )
  await claimPaidLines(
    trx,
    paid.map(({ line, payment }, index) => ({
      lineId: line.id,
      order: payment.order,
      ...postings[index],
    })),
    now.toJSDate()
  )
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
  await markReturnLine(trx, line.id, confirmation.returnedLineId)
}
