import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { decisionComment } from '#payments/payment_rules'
import { postLedgerTransaction } from '#ledger/ledger'
import { bankChargePosting } from '#ledger/recipes'
import { recordExplainedDebit } from '#payouts/payout_confirmations'
import { validateInput } from '#core/validation'
import type { Actor } from '#core/actor'
import {
  LINE_ID_MESSAGES,
  lockLine,
  statementLineId,
  writeDecision,
} from '#reconciliation/line_decision'
import { assertUnconfirmedDebit } from '#reconciliation/actions/confirm_debit_line'
import { inTransaction } from '#core/transaction'

/** Why money left a deposit account without a transfer of the gateway's. */
export const EXPLAIN_DEBIT_REASON_CODES = ['bank_charge', 'bank_correction', 'other'] as const

const schema = vine.object({
  statement_line_id: statementLineId(),
  reason_code: vine.enum(EXPLAIN_DEBIT_REASON_CODES),
  comment: decisionComment(),
})

export const explainDebitLineValidator = vine.compile(schema)
export type ExplainDebitData = Infer<typeof schema>

export const EXPLAIN_DEBIT_MESSAGES = {
  ...LINE_ID_MESSAGES,
  'reason_code.required': `reason_code is required: one of ${EXPLAIN_DEBIT_REASON_CODES.join(', ')}`,
  'comment.required': 'comment is required: say what the bank took the money for',
}

/**
 * An operator accounts for a debit no transfer of the gateway's explains (a
 * bank charge, a correction): the amount becomes the gateway's cost
 * (bank_charges), the line is decided "explained" and confirmed by its own
 * row, so that every debit line is accounted for once. No merchant balance
 * moves.
 */
export async function explainDebitLine(input: Record<string, unknown>, actor: Actor) {
  const data = await validateInput(explainDebitLineValidator, input, EXPLAIN_DEBIT_MESSAGES)
  return inTransaction(async (trx) => {
    const line = await lockLine(trx, data.statement_line_id)
    await assertUnconfirmedDebit(trx, line)
    await postLedgerTransaction(trx, bankChargePosting(line))
    await recordExplainedDebit(trx, {
      lineId: line.id,
      depositAccountId: line.deposit_account_id,
      amount: line.amount,
      actor,
      reason: `${data.reason_code}: ${data.comment}`,
    })
    await writeDecision(trx, line, {
      decision: 'explained',
      actor,
      reason: { code: data.reason_code, comment: data.comment },
      details: { amount: line.amount },
    })
    return { lineId: line.id, amount: line.amount }
  })
}
