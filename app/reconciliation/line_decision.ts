import vine from '@vinejs/vine'
import type { QueryClientContract, TransactionClientContract } from '@adonisjs/lucid/types/database'
import type { ApprovalTarget } from '#approvals/approvable_actions'
import { livePendingRequest, pendingRefusal } from '#approvals/approval_requests'
import { clearAssignment } from '#review/assignments'
import { recordAudit, type Reason } from '#core/audit'
import { ActionError } from '#core/validation'
import { formatAmount } from '#core/money'
import type { Actor } from '#core/actor'
import { AlreadyDone, atWhen, byWhom } from '#core/already_done'
import { assertLineUnclaimed, claimOfLine } from '#reconciliation/receipts'
import { findCandidates } from '#reconciliation/matching/candidates'
import { judgeLine, receivableNamedBy } from '#reconciliation/matching/rules'
import { toLineRow } from '#reconciliation/matching/line_row'

/**
 * The approval kind shared by every decision on a statement line: its
 * pending key (kind + line) lets one request wait per line, whichever
 * decision it asks for, so a line cannot be attached by one request and
 * credited by another.
 */
export const LINE_DECISION_KIND = 'line_decision'

export type LineDecision = 'attached' | 'credited' | 'returned' | 'explained'

/** A statement line row as the deciding actions read it (locked). */
export interface StatementLineRow {
  id: number
  deposit_account_id: number
  line_at: Date
  direction: 'credit' | 'debit'
  amount: number
  reference: string | null
  trans_ref: string | null
  description: string
  status: 'new' | 'matched' | 'unmatched' | 'late'
  note: string | null
  decision: LineDecision | null
  decided_by_actor: string | null
  decided_at: Date | null
}

/** The line an action names. */
export const statementLineId = () => vine.number().withoutDecimals().min(1)

export const LINE_ID_MESSAGES = {
  'statement_line_id.required': 'statement_line_id is required: the statement line decided on',
  'statement_line_id.number': 'statement_line_id must be a statement line number',
}

/** The line locked for the transaction; 404 naming the field when there is none. */
export async function lockLine(
  trx: TransactionClientContract,
  id: number,
  field = 'statement_line_id'
): Promise<StatementLineRow> {
  const row = await trx.from('statement_lines').where('id', id).forUpdate().first()
  if (!row) throw ActionError.notFound(field, `no statement line #${id}`)
  return { ...row, amount: Number(row.amount) } as StatementLineRow
}

/** What a submit asks for, so that a second one can be told it already holds. */
export interface WantedDecision {
  decision: LineDecision
  actor?: Actor
  /** attach: the order it was to pay (another one is not what was asked). */
  paymentOrderId?: number
}

/**
 * A line may be decided when it is a credit waiting for an operator
 * (unmatched or late) and no decision was written on it yet. The first
 * refusal a second submit meets says who decided and when ("by you" on a
 * double click); when it is the decision asked for, as a notice.
 */
export function assertDecidable(line: StatementLineRow, wanted?: WantedDecision) {
  if (line.decision) {
    const row = line as StatementLineRow & { payment_order_id?: number | string | null }
    const done =
      `statement line #${line.id} was already ${line.decision} by ${byWhom(line.decided_by_actor, wanted?.actor)}` +
      ` at ${atWhen(line.decided_at)}`
    const same =
      wanted?.decision === line.decision &&
      (wanted.paymentOrderId === undefined ||
        Number(row.payment_order_id) === wanted.paymentOrderId)
    if (same) throw new AlreadyDone(`${done}; nothing more to do`)
    throw ActionError.general(`${done}: a line is decided once; nothing was saved`)
  }
  if (line.direction !== 'credit') {
    throw ActionError.general(
      `statement line #${line.id} is a debit: only money received can be attached, credited or returned`
    )
  }
  if (line.status !== 'unmatched' && line.status !== 'late') {
    throw ActionError.general(
      `statement line #${line.id} is ${line.status}: only unmatched and late lines wait for an operator`
    )
  }
}

/** The claims each line decision makes itself (a decision by another path is not a repeat). */
const DECISION_CLAIM_PATHS: Record<LineDecision, readonly string[]> = {
  attached: ['attach', 'late_credit'],
  credited: ['merchant_credit'],
  returned: ['return'],
  explained: [],
}

/**
 * A line may be decided when no decision took its money yet (its claim,
 * named in the refusal), it waits for an operator (assertDecidable), and
 * no payment credited before its line expects it. The last is checked on
 * the locked receivables (the matcher's own rule): such a line clears that
 * receivable, by attaching it to that order, never credits twice.
 */
export async function assertLineFree(
  trx: TransactionClientContract,
  line: StatementLineRow,
  wanted?: WantedDecision
) {
  // The same operator's own decision first (a double click): "you did it at 14:02". Anyone
  // else's, or the line taken another way (a slip approved), is described by its claim,
  // which says how the money was taken, by whom and when.
  if (line.decision && wanted?.actor && line.decided_by_actor === wanted.actor.name) {
    const claim = await claimOfLine(trx, line.id)
    if (!claim || DECISION_CLAIM_PATHS[line.decision].includes(claim.path)) {
      assertDecidable(line, wanted)
    }
  }
  await assertLineUnclaimed(trx, line.id)
  assertDecidable(line, wanted)
}

/** Refuses a line an open receivable awaits, unless it is the receivable of `forOrderId`. */
export async function assertNotAwaited(
  trx: TransactionClientContract,
  line: StatementLineRow,
  forOrderId: number | null = null
) {
  if (line.direction !== 'credit') return
  const owed = await receivableAwaiting(trx, line)
  if (owed && owed.paymentOrderId !== forOrderId) {
    throw ActionError.general(
      `statement line #${line.id} is the bank line of ${owed.platformOrderId}, which was credited before its line arrived: attach it to ${owed.platformOrderId}`
    )
  }
}

/**
 * The open receivable this line belongs to, if any (receivables locked with `lock`): the
 * one it names (the slip's transaction reference, the order's reference),
 * whatever its amount, or the one the matcher's rules give it.
 */
export async function receivableAwaiting(
  client: QueryClientContract,
  line: StatementLineRow,
  options: { lock: boolean } = { lock: true }
) {
  const row = toLineRow(line as unknown as Record<string, any>)
  const candidates = await findCandidates(client, [row], options)
  const named = receivableNamedBy(row, candidates)
  if (named) return named
  const judgement = judgeLine(row, candidates)
  return 'receivable' in judgement ? judgement.receivable : null
}

/**
 * A decision taken directly is refused while a four-eyes request waits on
 * the line (not checked on approval: that request is the one running).
 */
export async function assertNoPendingRequest(
  trx: TransactionClientContract,
  line: StatementLineRow,
  field: string | null = null
) {
  const live = await livePendingRequest(trx, LINE_DECISION_KIND, lineTargetRef(line))
  if (live) throw pendingRefusal(live, field)
}

function lineTargetRef(line: Pick<StatementLineRow, 'id'>) {
  return { type: 'statement_line', id: String(line.id) }
}

/**
 * What a four-eyes request on the line is about: the line's amount, and the
 * operator who examined it (they ask; they may not approve).
 */
export function lineTarget(line: StatementLineRow, actor?: Actor): ApprovalTarget {
  return {
    ...lineTargetRef(line),
    amount: line.amount,
    reviewedBy: actor?.operatorId ?? null,
  }
}

export function lineSnapshot(line: StatementLineRow) {
  return {
    status: line.status,
    amount: formatAmount(line.amount),
    note: line.note ?? null,
    decision: line.decision ?? null,
  }
}

export interface DecisionWrite {
  decision: LineDecision
  /** Who decided: the operator acting, or the approver running a request. */
  actor: Actor
  reason: { code: string; comment: string }
  paymentOrderId?: number | null
  merchantId?: number | null
  returnTo?: { bank: string; accountNo: string; accountName: string } | null
  /** Extra columns (an open order's line becomes matched). */
  extra?: Record<string, unknown>
  /** The audit row's details. */
  details: Record<string, unknown>
  /** The approved request when the decision runs on approval. */
  requestId?: number | null
}

/** The audit action of each decision. */
const DECISION_ACTIONS: Record<LineDecision, string> = {
  attached: 'attach',
  credited: 'credit',
  returned: 'return',
  explained: 'explain',
}

/**
 * Writes the decision on the (locked) line, its audit row, and takes the line
 * out of the queue (its assignment goes): in the deciding transaction.
 */
export async function writeDecision(
  trx: TransactionClientContract,
  line: StatementLineRow,
  write: DecisionWrite
) {
  const before = lineSnapshot(line)
  const now = new Date()
  const columns = {
    decision: write.decision,
    decided_by: write.actor.operatorId ?? null,
    decided_by_actor: write.actor.name.slice(0, 120),
    decided_at: now,
    reason_code: write.reason.code,
    comment: write.reason.comment,
    payment_order_id: write.paymentOrderId ?? null,
    merchant_id: write.merchantId ?? null,
    return_bank: write.returnTo?.bank ?? null,
    return_account_no: write.returnTo?.accountNo ?? null,
    return_account_name: write.returnTo?.accountName ?? null,
    ...write.extra,
  }
  // The lock is held, but the condition keeps "decided once" true even if a caller forgot it.
  const updated = await trx
    .from('statement_lines')
    .where('id', line.id)
    .whereNull('decision')
    .update(columns)
  if (Number(updated) !== 1) {
    throw ActionError.general(`statement line #${line.id} was already decided`)
  }
  Object.assign(line, columns)
  const reason: Reason = { code: write.reason.code, comment: write.reason.comment }
  await recordAudit(trx, write.actor, {
    action: `statement_line.${DECISION_ACTIONS[write.decision]}`,
    target: { type: 'statement_line', id: String(line.id) },
    before,
    after: lineSnapshot(line),
    reason,
    details: { ...write.details, approval_request_id: write.requestId ?? null },
  })
  await clearAssignment(trx, 'lines', line.id)
}
