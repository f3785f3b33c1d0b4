import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import db from '@adonisjs/lucid/services/db'
import { decisionComment } from '#payments/payment_rules'
import { postLedgerTransaction } from '#ledger/ledger'
import { returnToPayerPosting } from '#ledger/recipes'
import { insertClaim } from '#reconciliation/receipts'
import { recordReturnToSend } from '#payouts/payout_confirmations'
import { BANKS } from '#core/banks'
import { validateInput } from '#core/validation'
import { withDeadlockRetry } from '#core/db_retry'
import type { Actor } from '#core/actor'
import {
  assertLineFree,
  assertNotAwaited,
  assertNoPendingRequest,
  LINE_ID_MESSAGES,
  lockLine,
  statementLineId,
  writeDecision,
} from '#reconciliation/line_decision'

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

/**
 * Returns an unmatched (or late) statement line to the payer: the amount
 * the gateway holds for nobody leaves deposit clearing for payout clearing
 * (one "statement_line_return" posting keyed by the line; no merchant's
 * balance moves, no fee), and the line records the account it goes back to
 * (from its description, corrected by the operator). The transfer itself is
 * made from the deposit account in the bank's portal, as runbook; it shows
 * on a later statement as a debit line. No four eyes: the money goes back to
 * where it came from, never to a merchant.
 */
export async function returnStatementLine(input: Record<string, unknown>, actor: Actor) {
  const data = await validateInput(returnStatementLineValidator, input, RETURN_LINE_MESSAGES)
  return withDeadlockRetry(() =>
    db.transaction(async (trx) => {
      const line = await lockLine(trx, data.statement_line_id)
      await assertLineFree(trx, line, { decision: 'returned', actor })
      await assertNotAwaited(trx, line)
      await assertNoPendingRequest(trx, line)
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
        },
      })
      return { lineId: line.id, amount: line.amount, bank: data.bank, accountNo: data.account_no }
    })
  )
}
