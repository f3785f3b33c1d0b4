import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type Merchant from '#merchants/models/merchant'
import Platform from '#merchants/models/platform'
import type ApprovalRequest from '#approvals/models/approval_request'
import { registerApprovableAction, type RunContext } from '#approvals/approvable_actions'
import { decideWithFourEyes } from '#approvals/four_eyes_decision'
import { lockMerchant } from '#merchants/merchant_rules'
import { decisionComment } from '#payments/payment_rules'
import { postLedgerTransaction } from '#ledger/ledger'
import { lineCreditPosting } from '#ledger/recipes'
import { validateInput } from '#core/validation'
import type { Actor } from '#core/actor'
import { insertClaim } from '#reconciliation/receipts'
import {
  assertLineFree,
  assertNotAwaited,
  LINE_ID_MESSAGES,
  lineTarget,
  lockLine,
  statementLineId,
  writeDecision,
} from '#reconciliation/line_decision'

/** Why an operator says a statement line's money belongs to a merchant. */
export const CREDIT_LINE_REASON_CODES = [
  'merchant_claimed',
  'wrong_amount',
  'order_not_created',
  'late_payment',
  'other',
] as const

const schema = vine.object({
  statement_line_id: statementLineId(),
  merchant_id: vine.string().trim().minLength(1).maxLength(32),
  reason_code: vine.enum(CREDIT_LINE_REASON_CODES),
  comment: decisionComment(),
})

export const creditMerchantFromLineValidator = vine.compile(schema)
export type CreditLineData = Infer<typeof schema>

export const CREDIT_LINE_MESSAGES = {
  ...LINE_ID_MESSAGES,
  'merchant_id.required': 'merchant_id is required: the merchant whose balance receives the line',
  'reason_code.required': `reason_code is required: one of ${CREDIT_LINE_REASON_CODES.join(', ')}`,
  'comment.required': "comment is required: say what shows that the money is this merchant's",
}

export type CreditLinePrepared = Awaited<ReturnType<typeof prepareCreditLine>>

export type CreditLineResult =
  | {
      outcome: 'credited'
      lineId: number
      merchant: Merchant
      credited: number
      fee: number
      request: null
    }
  | { outcome: 'approval_requested'; lineId: number; merchant: Merchant; request: ApprovalRequest }

/**
 * Credits an unmatched (or late) statement line to the merchant an operator
 * chooses: the line's amount less the merchant's payment fee (the money is
 * one of its customers' deposits that found no order) goes to the merchant's
 * available balance, the fee to fee revenue, out of deposit clearing; one
 * "statement_line_credit" posting keyed by the line. Above the merchant's
 * platform four-eyes threshold an approval request is opened instead.
 */
export async function creditMerchantFromLine(
  input: Record<string, unknown>,
  actor: Actor
): Promise<CreditLineResult> {
  const data = await validateInput(creditMerchantFromLineValidator, input, CREDIT_LINE_MESSAGES)
  const { prepared, request, result } = await decideWithFourEyes({
    action: 'statement_line.credit_merchant',
    data,
    actor,
    reason: { code: data.reason_code, comment: data.comment },
    prepare: async (trx) => {
      const locked = await prepareCreditLine(trx, data, actor)
      const threshold = locked.platform.fourEyesThreshold
      return { prepared: locked, threshold, amount: locked.line.amount }
    },
    run: (trx, locked) => runCreditLine(trx, locked, data, { actor, request: null }),
  })
  const { line, merchant } = prepared
  if (request) return { outcome: 'approval_requested', lineId: line.id, merchant, request }
  const { credited, fee } = result
  return { outcome: 'credited', lineId: line.id, merchant, credited, fee, request: null }
}

/** Locks the line, finds the merchant; the line must still wait for a decision. */
export async function prepareCreditLine(
  trx: TransactionClientContract,
  data: CreditLineData,
  actor?: Actor
) {
  const line = await lockLine(trx, data.statement_line_id)
  await assertLineFree(trx, line, { decision: 'credited', actor })
  await assertNotAwaited(trx, line)
  // Not locked: the posting locks the merchant's balance row itself.
  const merchant = await lockMerchant(trx, data.merchant_id, { forUpdate: false })
  const platform = await Platform.findOrFail(merchant.platformId, { client: trx })
  return { line, merchant, platform, target: lineTarget(line, actor) }
}

export async function runCreditLine(
  trx: TransactionClientContract,
  prepared: CreditLinePrepared,
  data: CreditLineData,
  context: RunContext
) {
  const { line, merchant } = prepared
  const { actor, request } = context
  const { fee, credited, posting } = lineCreditPosting(line, merchant)
  const postingId = await postLedgerTransaction(trx, posting)
  await insertClaim(trx, {
    depositAccountId: line.deposit_account_id,
    statementLineId: line.id,
    path: 'merchant_credit',
    actor,
    merchantId: merchant.id,
    expectedAmount: line.amount,
    credited,
    fee,
    approvalRequestId: request?.id ?? null,
    ledgerTransactionId: postingId,
  })
  await writeDecision(trx, line, {
    decision: 'credited',
    actor,
    reason: { code: data.reason_code, comment: data.comment },
    merchantId: merchant.id,
    details: {
      merchant_id: merchant.merchantId,
      amount: line.amount,
      credited,
      fee,
      requested_by: request?.requestedByActor ?? null,
    },
    requestId: request?.id ?? null,
  })
  return { statement_line_id: line.id, merchant_id: merchant.merchantId, credited, fee }
}

/*
 * Shares the kind "line_decision" with attaching the line to an order (one
 * pending decision per line); it credits a merchant, not an order, so a
 * freeze does not stop it.
 */
registerApprovableAction<CreditLineData, CreditLinePrepared>({
  name: 'statement_line.credit_merchant',
  kind: 'line_decision',
  approverRole: 'operator',
  describe: (data) =>
    `credit statement line #${data.statement_line_id} to merchant ${data.merchant_id}`,
  validate: (input) => validateInput(creditMerchantFromLineValidator, input, CREDIT_LINE_MESSAGES),
  prepare: (trx, data, actor) => prepareCreditLine(trx, data, actor),
  run: (trx, prepared, data, context) => runCreditLine(trx, prepared, data, context),
})
