import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import { decisionComment } from '#payments/payment_rules'
import { postLedgerTransaction } from '#ledger/ledger'
import { returnToPayerPosting } from '#ledger/recipes'
import { insertClaim } from '#reconciliation/receipts'
import { recordReturnToSend } from '#payouts/payout_confirmations'
import { BANKS } from '#core/banks'
import { validateInput } from '#core/validation'
import type { Actor } from '#core/actor'
import {
  assertLineFree,
  assertNotAwaited,
  LINE_DECISION_KIND,
  LINE_ID_MESSAGES,
  lineTarget,
  lockLine,
  statementLineId,
  writeDecision,
} from '#reconciliation/line_decision'
import type ApprovalRequest from '#approvals/models/approval_request'
import { registerApprovableAction, type RunContext } from '#approvals/approvable_actions'
import { askOrApplyFromShell } from '#approvals/maker_checker'
import { formatThb } from '#core/money'
import { inTransaction } from '#core/transaction'

/** Why the money goes back to whoever sent it. */
export const RETURN_LINE_REASON_CODES = [
  'no_matching_order',
  'wrong_amount',
  'payer_requested',
  'merchant_refused',
  'other',
] as const

const BANK_CODES = Object.keys(BANKS) as [keyof typeof BANKS, ...Array<keyof typeof BANKS>]

const schema = vine.object({
  statement_line_id: statementLineId(),
  bank: vine.enum(BANK_CODES),
  account_no: vine
    .string()
    .trim()
    .regex(/^\d{10,15}$/),
  account_name: vine.string().trim().minLength(1).maxLength(120),
  reason_code: vine.enum(RETURN_LINE_REASON_CODES),
  comment: decisionComment(),
})

export const returnStatementLineValidator = vine.compile(schema)
export type ReturnLineData = Infer<typeof schema>

export const RETURN_LINE_MESSAGES = {
  ...LINE_ID_MESSAGES,
  'bank.required': "bank is required: the payer's bank code (KBANK, SCB, ...)",
  'bank.enum': `bank must be one of: ${BANK_CODES.join(', ')}`,
  'account_no.required': "account_no is required: the payer's account number",
  'account_no.regex': 'account_no must be 10 to 15 digits',
  'account_name.required': "account_name is required: the payer's name as the bank has it",
  'reason_code.required': `reason_code is required: one of ${RETURN_LINE_REASON_CODES.join(', ')}`,
  'comment.required': 'comment is required: say why the money goes back',
}

export const RETURN_LINE_ACTION = 'statement_line.return'

export type ReturnLinePrepared = Awaited<ReturnType<typeof prepareReturn>>

export type ReturnLineResult =
  | { outcome: 'approval_requested'; lineId: number; amount: number; request: ApprovalRequest }
  | {
      outcome: 'returned'
      lineId: number
      amount: number
      bank: string
      accountNo: string
      request: null
    }

/** The typed destination as the card and the messages show it. */
function destination(data: Pick<ReturnLineData, 'bank' | 'account_no' | 'account_name'>) {
  return `${data.bank} ${data.account_no} (${data.account_name})`
}

/**
 * Returns an unmatched (or late) statement line to the payer: the amount
 * the gateway holds for nobody leaves deposit clearing for payout clearing
 * (one "statement_line_return" posting keyed by the line; no merchant's
 * balance moves, no fee), and the line records the account it goes back to.
 * That account is typed by an operator, so it decides where money goes: in
 * the back-office the return is a maker-checker change, an approval request
 * (kind line_decision: no other decision takes the line while it waits) that
 * an admin other than the requester carries out as stored; nothing is
 * claimed, posted or recorded to send until then. From the server's shell
 * it applies at once, as a break-glass use. The transfer itself is made from
 * the deposit account in the bank's portal, as runbook; it shows on a later
 * statement as a debit line.
 */
export async function returnStatementLine(
  input: Record<string, unknown>,
  actor: Actor
): Promise<ReturnLineResult> {
  const data = await validateInput(returnStatementLineValidator, input, RETURN_LINE_MESSAGES)
  return inTransaction(async (trx) => {
    const prepared = await prepareReturn(trx, data, actor)
    const { line } = prepared
    const outcome = await askOrApplyFromShell(trx, {
      action: RETURN_LINE_ACTION,
      target: prepared.target,
      input: data,
      prepared,
      actor,
      reason: { code: data.reason_code, comment: data.comment },
      summary: `returned statement line #${line.id} (${formatThb(line.amount)} THB) to ${destination(data)}`,
      run: () => runReturn(trx, prepared, data, { actor, request: null }),
    })
    if (outcome.request) {
      return {
        outcome: 'approval_requested' as const,
        lineId: line.id,
        amount: line.amount,
        request: outcome.request,
      }
    }
    return {
      outcome: 'returned' as const,
      lineId: line.id,
      amount: line.amount,
      bank: data.bank,
      accountNo: data.account_no,
      request: null,
    }
  })
}

/** Locks the line; it must still wait for a decision (opening, and again on approval). */
export async function prepareReturn(
  trx: TransactionClientContract,
  data: ReturnLineData,
  actor?: Actor
) {
  const line = await lockLine(trx, data.statement_line_id)
  await assertLineFree(trx, line, { decision: 'returned', actor })
  await assertNotAwaited(trx, line)
  return { line, target: lineTarget(line, actor) }
}

/** The return itself: the posting, the line's claim, the transfer to send, the decision. */
export async function runReturn(
  trx: TransactionClientContract,
  prepared: ReturnLinePrepared,
  data: ReturnLineData,
  context: RunContext
) {
  const { line } = prepared
  const { actor, request } = context
  const postingId = await postLedgerTransaction(
    trx,
    returnToPayerPosting(line, { bank: data.bank, accountNo: data.account_no })
  )
  // The money goes back: the line is claimed by the return, and by nothing else.
  await insertClaim(trx, {
    depositAccountId: line.deposit_account_id,
    statementLineId: line.id,
    path: 'return',
    actor,
    expectedAmount: line.amount,
    approvalRequestId: request?.id ?? null,
    ledgerTransactionId: postingId,
  })
  // The transfer back is made in the bank's portal: its debit line confirms it.
  await recordReturnToSend(trx, {
    lineId: line.id,
    depositAccountId: line.deposit_account_id,
    amount: line.amount,
    actor,
  })
  await writeDecision(trx, line, {
    decision: 'returned',
    actor,
    reason: { code: data.reason_code, comment: data.comment },
    returnTo: { bank: data.bank, accountNo: data.account_no, accountName: data.account_name },
    details: {
      amount: line.amount,
      bank: data.bank,
      account_no: data.account_no,
      account_name: data.account_name,
      requested_by: request?.requestedByActor ?? null,
    },
    requestId: request?.id ?? null,
  })
  return {
    statement_line_id: line.id,
    amount: formatThb(line.amount),
    bank: data.bank,
    account_no: data.account_no,
  }
}

/*
 * Shares the kind "line_decision" with the other line decisions (one
 * pending decision per line). An admin approves: the account was typed by
 * the requester, and the money leaves the gateway.
 */
registerApprovableAction<ReturnLineData, ReturnLinePrepared>({
  name: RETURN_LINE_ACTION,
  kind: LINE_DECISION_KIND,
  approverRole: 'admin',
  sensitive: true,
  describe: (data) => `return statement line #${data.statement_line_id} to ${destination(data)}`,
  change: (data, prepared) => ({
    before: {
      statement_line: `#${prepared.line.id}`,
      amount: `${formatThb(prepared.line.amount)} THB`,
      return_to: '—',
    },
    after: {
      statement_line: `#${prepared.line.id}`,
      amount: `${formatThb(prepared.line.amount)} THB`,
      return_to: destination(data),
    },
  }),
  validate: (input) => validateInput(returnStatementLineValidator, input, RETURN_LINE_MESSAGES),
  prepare: (trx, data, actor) => prepareReturn(trx, data, actor),
  run: (trx, prepared, data, context) => runReturn(trx, prepared, data, context),
})
