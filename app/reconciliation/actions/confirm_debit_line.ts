import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import { lockPayout, payoutOrderId, payoutSnapshot } from '#payouts/payout_rules'
import { completePayout } from '#payouts/actions/complete_payout'
import {
  confirmationOfLine,
  confirmationOfPayout,
  confirmWithLine,
  describeConfirmation,
  DebitAlreadyConfirmedError,
  toConfirmation,
} from '#payouts/payout_confirmations'
import { decisionComment } from '#payments/payment_rules'
import { recordAudit } from '#core/audit'
import { ActionError, validateInput } from '#core/validation'
import { formatThb } from '#core/money'
import type { Actor } from '#core/actor'
import {
  LINE_ID_MESSAGES,
  lineSnapshot,
  lockLine,
  statementLineId,
  type StatementLineRow,
} from '#reconciliation/line_decision'
import { clearAssignment } from '#review/assignments'
import { inTransaction } from '#core/transaction'

/** A debit is one transfer: a payout or the return of a credit line, never both or neither. */
const payoutOrReturn = vine.createRule(
  (value, _options, field) => {
    const returned = (field.parent as { returned_line_id?: unknown }).returned_line_id
    if ((value === undefined || value === null) !== (returned === undefined || returned === null)) {
      return
    }
    field.report(
      'name either the payout (platform_order_id) or the returned line (returned_line_id) this debit is',
      'payout_or_return',
      field
    )
  },
  { implicit: true }
)

const schema = vine.object({
  statement_line_id: statementLineId(),
  /** The withdrawal or settlement the debit paid out. */
  platform_order_id: vine.any().use(payoutOrderId()).optional().use(payoutOrReturn()),
  /** Or: the credit line whose return to the payer the debit is. */
  returned_line_id: vine.number().withoutDecimals().min(1).optional(),
  comment: decisionComment(),
})

export const confirmDebitLineValidator = vine.compile(schema)
export type ConfirmDebitData = Infer<typeof schema>

export const CONFIRM_DEBIT_MESSAGES = {
  ...LINE_ID_MESSAGES,
  'comment.required': 'comment is required: say what shows that this debit is that transfer',
  'returned_line_id.number': 'returned_line_id must be a statement line number',
}

/**
 * An operator says which transfer a debit line is, when the matcher could
 * not tell (no reference of ours on the line): a withdrawal or settlement
 * (still pending: the statement is the bank's answer and completes it;
 * already successful: the line confirms it), or the return of a credit to
 * its payer. The amounts must agree. The line is matched, the transfer
 * confirmed (a debit line confirms one transfer: unique key), with the
 * audit row, in one transaction.
 */
export async function confirmDebitLine(input: Record<string, unknown>, actor: Actor) {
  const data = await validateInput(confirmDebitLineValidator, input, CONFIRM_DEBIT_MESSAGES)
  return inTransaction(async (trx) => {
    const line = await lockLine(trx, data.statement_line_id)
    await assertUnconfirmedDebit(trx, line)
    const before = lineSnapshot(line)
    const confirmed =
      data.platform_order_id !== undefined
        ? await confirmPayout(trx, line, data.platform_order_id, actor, data.comment)
        : await confirmReturn(trx, line, data.returned_line_id!)
    await trx
      .from('statement_lines')
      .where('id', line.id)
      .update({
        status: 'matched',
        matched_at: new Date(),
        order_type: confirmed.order?.kind ?? null,
        order_id: confirmed.order?.id ?? null,
        note: confirmed.order ? null : `return of statement line #${data.returned_line_id}`,
      })
    await clearAssignment(trx, 'lines', line.id)
    await recordAudit(trx, actor, {
      action: 'statement_line.confirm',
      target: { type: 'statement_line', id: String(line.id) },
      before,
      after: { ...before, status: 'matched' },
      reason: { comment: data.comment },
      details: {
        amount: line.amount,
        platform_order_id: confirmed.order?.platformOrderId ?? null,
        returned_line_id: data.returned_line_id ?? null,
        payout_before: confirmed.payoutBefore,
      },
    })
    return {
      lineId: line.id,
      amount: line.amount,
      what: confirmed.order
        ? `${confirmed.order.platformOrderId} (${confirmed.order.status})`
        : `the return of statement line #${data.returned_line_id}`,
    }
  })
}

/** A debit line an operator may still account for. */
export async function assertUnconfirmedDebit(
  trx: TransactionClientContract,
  line: StatementLineRow
) {
  if (line.direction !== 'debit') {
    throw ActionError.general(
      `statement line #${line.id} is a credit: only money that left the account confirms a transfer`
    )
  }
  const confirmation = await confirmationOfLine(trx, line.id)
  if (confirmation) throw new DebitAlreadyConfirmedError(line.id, confirmation)
  if (line.decision) {
    throw ActionError.general(
      `statement line #${line.id} was already ${line.decision} by ${line.decided_by_actor ?? 'someone'}`
    )
  }
}

async function confirmPayout(
  trx: TransactionClientContract,
  line: StatementLineRow,
  platformOrderId: string,
  actor: Actor,
  comment: string
) {
  const order = await lockPayout(trx, platformOrderId)
  if (order.amount !== line.amount) {
    throw ActionError.field(
      'platform_order_id',
      `${order.platformOrderId} sends ${formatThb(order.amount)} THB but line #${line.id} is ${formatThb(line.amount)} THB`
    )
  }
  const payoutBefore = payoutSnapshot(order)
  if (order.status === 'pending') {
    // The statement is the bank's answer: the payout succeeded, confirmed by this line.
    await completePayout(
      order.id,
      { success: true },
      {
        client: trx,
        actor,
        reason: `statement line ${line.id}: ${comment}`,
        sentBy: { line: { id: line.id, depositAccountId: line.deposit_account_id } },
      }
    )
    await order.refresh()
    return { order, payoutBefore }
  }
  const confirmation = await confirmationOfPayout(trx, order.id)
  if (order.status !== 'success' || !confirmation) {
    throw ActionError.field(
      'platform_order_id',
      `${order.platformOrderId} is ${order.status}: no money left the bank for it`
    )
  }
  if (confirmation.statementLineId !== null) {
    throw ActionError.field(
      'platform_order_id',
      `${order.platformOrderId} is already confirmed by statement line #${confirmation.statementLineId}`
    )
  }
  await confirmWithLine(trx, confirmation, line)
  return { order, payoutBefore }
}

async function confirmReturn(
  trx: TransactionClientContract,
  line: StatementLineRow,
  returnedLineId: number
) {
  const row = await trx
    .from('payout_confirmations')
    .where('returned_line_id', returnedLineId)
    .forUpdate()
    .first()
  if (!row) {
    throw ActionError.field(
      'returned_line_id',
      `statement line #${returnedLineId} was not returned to its payer`
    )
  }
  const confirmation = toConfirmation(row)
  if (confirmation.statementLineId !== null) {
    throw ActionError.field(
      'returned_line_id',
      `${describeConfirmation(confirmation)} is already confirmed by statement line #${confirmation.statementLineId}`
    )
  }
  if (
    confirmation.amount !== line.amount ||
    confirmation.depositAccountId !== line.deposit_account_id
  ) {
    throw ActionError.field(
      'returned_line_id',
      `the return of line #${returnedLineId} sends ${formatThb(confirmation.amount)} THB from deposit account ${confirmation.depositAccountId}; line #${line.id} is ${formatThb(line.amount)} THB on account ${line.deposit_account_id}`
    )
  }
  await confirmWithLine(trx, confirmation, line)
  return { order: null, payoutBefore: null }
}
