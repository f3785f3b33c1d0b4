import { openReceivablesQueue } from '#admin/queries/reconciliation_page'
import { ageClass, ageLabel } from '#review/queues'
import { formatThb } from '#core/money'
import { formatGatewayDateTime } from '#core/clock'

/**
 * One page of the receivables queue as it shows: each open receivable with
 * its order, deposit account, who credited it and how, and its age (past
 * the window: flagged).
 */
export async function receivablesQueuePage(pageNumber: number, perPage: number) {
  const { page, rows, windowHours } = await openReceivablesQueue({ page: pageNumber, perPage })
  return {
    page,
    windowHours,
    rows: rows.map((row) => ({
      claimId: row.claimId,
      platformOrderId: row.platformOrderId,
      orderStatus: row.orderStatus,
      merchantId: row.merchantId,
      merchantName: row.merchantName,
      depositAccountId: row.depositAccountId,
      account: row.account,
      accountName: row.accountName,
      amount: formatThb(row.amount),
      claimedAt: formatGatewayDateTime(row.claimedAt),
      path: row.path,
      actor: row.actor,
      approvalRequestId: row.approvalRequestId,
      slipId: row.slipId,
      transRef: row.transRef,
      age: ageLabel(row.claimedAt),
      ageClass: row.stale ? 'age-old' : ageClass(row.claimedAt),
      stale: row.stale,
    })),
  }
}
