import type { AttachLineResult } from '#reconciliation/actions/attach_statement_line'
import type { creditMerchantFromLine } from '#reconciliation/actions/credit_merchant_from_line'
import type { returnStatementLine } from '#reconciliation/actions/return_statement_line'
import { formatThb } from '#core/money'

/**
 * What the operator is told after deciding on a statement line: attach it
 * to an order, credit it to a merchant, return it to the payer.
 */

export function attachedMessage(lineId: string, result: AttachLineResult) {
  const id = result.order.platformOrderId
  if (result.outcome === 'approval_requested') {
    return `line #${lineId}: approval request #${result.request.id} opened to attach it to ${id}; a second operator must approve it`
  }
  if (result.outcome === 'paid') return `line #${lineId} attached: ${id} is paid`
  if (result.outcome === 'receivable_cleared') {
    // The payment was credited before its line: the line backs it (a credit corrected if it said so).
    return (
      `line #${lineId} attached to ${id}, credited before its line: its receivable is cleared` +
      (result.credited !== null
        ? `, the credit corrected to ${formatThb(result.credited)} THB (fee ${formatThb(result.fee ?? 0)})`
        : '')
    )
  }
  return `line #${lineId} attached to ${id} (late payment): ${formatThb(result.credited ?? 0)} THB credited to the merchant (fee ${formatThb(result.fee ?? 0)}), the order stays ${result.order.status}`
}

export function creditedMessage(
  lineId: string,
  result: Awaited<ReturnType<typeof creditMerchantFromLine>>
) {
  if (result.outcome === 'approval_requested') {
    return `line #${lineId}: approval request #${result.request.id} opened to credit ${result.merchant.merchantId}; a second operator must approve it`
  }
  return `line #${lineId}: ${formatThb(result.credited)} THB credited to ${result.merchant.merchantId} (fee ${formatThb(result.fee)})`
}

/** `to`: the payer's account as the operator typed it. */
export function returnedMessage(
  lineId: string,
  result: Awaited<ReturnType<typeof returnStatementLine>>,
  to: { bank?: unknown; account_no?: unknown }
) {
  if (result.outcome === 'approval_requested') {
    return `approval request #${result.request.id} opened: waits for a second admin (return ${formatThb(result.amount)} THB of line #${lineId} to ${to.bank} ${to.account_no}; nothing is returned until approved)`
  }
  return `line #${lineId}: ${formatThb(result.amount)} THB to be returned to ${result.bank} ${result.accountNo}; make the transfer from the deposit account`
}
