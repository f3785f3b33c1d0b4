import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import type { DatabaseQueryBuilderContract } from '@adonisjs/lucid/types/querybuilder'
import { assignmentsOf, itemsAssignedTo } from '#review/assignments'
import { ageClass, ageLabel } from '#review/queues'
import { formatThb } from '#core/money'
import { formatGatewayDateTime } from '#core/clock'
import { lineClaimView, receivableOfLine } from '#admin/views/receipt_claims'
import { debitCandidates, lineConfirmationView } from '#admin/views/debit_confirmations'
import { slipsOfLine } from '#admin/views/receipt_lines'

/** The queue's status filter: credits unmatched or late, debits nothing accounts for. */
export const LINES_QUEUE_STATUSES = ['unmatched', 'late', 'unexplained_debit'] as const
export type LinesQueueStatus = (typeof LINES_QUEUE_STATUSES)[number]

export interface LinesQueueFilters {
  status?: LinesQueueStatus
  account?: number
  /** Only the lines this operator holds. */
  mineOf?: number
}

export function linesQueueFilters(qs: Record<string, unknown>, operatorId: number) {
  const status = (LINES_QUEUE_STATUSES as readonly unknown[]).includes(qs.status)
    ? (qs.status as LinesQueueStatus)
    : undefined
  const account = Number(qs.account) || undefined
  return {
    status,
    account,
    mineOf: qs.mine === '1' ? operatorId : undefined,
  } satisfies LinesQueueFilters
}

/**
 * The lines waiting for an operator (`l`: statement_lines), nobody decided
 * yet: credits the matcher left unmatched or late, and debits that no
 * transfer confirms (no payout_confirmations row names them: reconcile:verify's
 * unexplained_debit) once the matcher judged them (`unmatched`). Decision
 * and status first, for the queue index.
 */
function waitingLines(query: DatabaseQueryBuilderContract<any>, status?: LinesQueueStatus) {
  const credits = status === 'unexplained_debit' ? [] : status ? [status] : ['unmatched', 'late']
  const debits = status === undefined || status === 'unexplained_debit'
  query
    .whereNull('l.decision')
    .whereIn(
      'l.status',
      debits && !credits.includes('unmatched') ? [...credits, 'unmatched'] : credits
    )
    .where((which) => {
      if (credits.length > 0) {
        which.orWhere((credit) =>
          credit.where('l.direction', 'credit').whereIn('l.status', credits)
        )
      }
      if (debits) {
        which.orWhere((debit) =>
          debit
            .where('l.direction', 'debit')
            .where('l.status', 'unmatched')
            .whereNotExists((confirmed) =>
              confirmed
                .from('payout_confirmations as p')
                .whereRaw('p.statement_line_id = l.id')
                .select(db.raw('1'))
            )
        )
      }
    })
  return query
}

/**
 * The queue: credit lines the matcher left to an operator (unmatched, late)
 * and debit lines no transfer confirms, nobody decided yet, oldest first,
 * with who holds each and how long it has waited (since it was imported).
 */
export async function linesQueue(filters: LinesQueueFilters, page: number, perPage = 25) {
  const query = waitingLines(
    db.from('statement_lines as l').join('deposit_accounts as a', 'a.id', 'l.deposit_account_id'),
    filters.status
  )
  if (filters.account) query.where('l.deposit_account_id', filters.account)
  if (filters.mineOf) query.whereIn('l.id', itemsAssignedTo('lines', filters.mineOf))
  const result = await query
    .orderBy('l.created_at')
    .orderBy('l.id')
    .select(
      'l.id',
      'l.status',
      'l.direction',
      'l.amount',
      'l.line_at',
      'l.reference',
      'l.description',
      'l.note',
      'l.created_at',
      'a.bank',
      'a.account_no',
      'a.id as account_id'
    )
    .paginate(page, perPage)
  const rows = result.all()
  const held = await assignmentsOf(
    'lines',
    rows.map((row) => row.id)
  )
  const now = DateTime.now()
  return {
    rows: rows.map((row) => ({
      id: Number(row.id),
      status: row.status,
      direction: row.direction as 'credit' | 'debit',
      amount: formatThb(Number(row.amount)),
      line_at: formatGatewayDateTime(row.line_at),
      reference: row.reference,
      description: row.description,
      note: row.note,
      account: `${row.bank} ${row.account_no}`,
      waiting: ageLabel(new Date(row.created_at), now),
      age_class: ageClass(new Date(row.created_at), now),
      held_by: held.get(String(row.id))?.operatorEmail ?? null,
    })),
    page: result.getMeta(),
  }
}

/** Undecided lines waiting (credits unmatched or late, unexplained debits): the tab's count. */
export async function linesQueueCount() {
  const row = await waitingLines(db.from('statement_lines as l')).count('* as total').first()
  return Number(row?.total ?? 0)
}

/** Bank and account parsed from a line's description, to fill the return form. */
export function payerFromDescription(description: string) {
  const bank = /\bFROM\s+([A-Z]{2,5})\b/i.exec(description)?.[1]?.toUpperCase() ?? ''
  const accountNo = /\b(\d{10,15})\b/.exec(description)?.[1] ?? ''
  const name = /X?\d{4,15}\s+([A-Z][A-Z .'-]{2,60})$/i.exec(description)?.[1]?.trim() ?? ''
  return { bank, accountNo, name }
}

/**
 * One line with everything its page shows: the line, its decision (once
 * made), who holds it, the claim on its money (who took it) or else the
 * open receivable it belongs to, the slips naming its transfer, and the
 * payment orders it may pay: named by its reference or note, or on the
 * same account with an amount within 1 THB and an order time within a day
 * of the line. A debit instead: the transfer it confirms (or the operator's
 * explanation), or, while nothing accounts for it, the transfers of its
 * amount it may be.
 */
export async function linePage(id: number) {
  const row = await db
    .from('statement_lines as l')
    .join('deposit_accounts as a', 'a.id', 'l.deposit_account_id')
    .leftJoin('payment_orders as o', 'o.id', 'l.payment_order_id')
    .leftJoin('merchants as m', 'm.id', 'l.merchant_id')
    .where('l.id', id)
    .select(
      'l.*',
      'a.bank',
      'a.account_no',
      'a.account_name',
      'o.platform_order_id as decided_order',
      'm.merchant_id as decided_merchant',
      'm.name as decided_merchant_name'
    )
    .first()
  if (!row) return null
  const amount = Number(row.amount)
  const lineAt = new Date(row.line_at)
  const isDebit = row.direction === 'debit'
  const named = [row.reference, row.note].filter(
    (value): value is string => typeof value === 'string' && value.length > 0
  )
  const candidates = isDebit ? [] : await paymentCandidates(row, amount, lineAt, named)
  const held = (await assignmentsOf('lines', [id])).get(String(id)) ?? null
  // Merchants who take payments on this account: the usual choice for a credit.
  const merchants = isDebit
    ? []
    : await db
        .from('merchants as m')
        .whereExists((sub) =>
          sub
            .from('payment_orders as o')
            .whereRaw('o.merchant_id = m.id')
            .where('o.deposit_account_id', row.deposit_account_id)
        )
        .orderBy('m.merchant_id')
        .limit(50)
        .select('m.merchant_id', 'm.name')
  const payer = payerFromDescription(row.description ?? '')
  const pending = await db
    .from('approval_requests')
    .where('pending_key', `line_decision:statement_line:${id}`)
    .select('id', 'action', 'requested_by_actor', 'expires_at')
    .first()
  // Who took the line's money; else the receivable it belongs to; the slips naming its transfer.
  const claim = await lineClaimView(id)
  const receivable = claim
    ? null
    : await receivableOfLine({
        id,
        deposit_account_id: Number(row.deposit_account_id),
        direction: row.direction,
        amount,
        line_at: lineAt,
        reference: row.reference ?? null,
        trans_ref: row.trans_ref ?? null,
        status: row.status,
      })
  const slips = await slipsOfLine(row.trans_ref ?? null, Number(row.deposit_account_id))
  // Money out: what the debit confirms; else the transfers it may be (none once explained).
  const confirmation = isDebit ? await lineConfirmationView(id) : null
  const transfers =
    isDebit && !confirmation && !row.decision
      ? await debitCandidates({
          deposit_account_id: Number(row.deposit_account_id),
          amount,
          line_at: lineAt,
        })
      : []
  return {
    claim,
    receivable,
    slips,
    debit: isDebit ? { confirmation, transfers } : null,
    pending: pending
      ? {
          id: Number(pending.id),
          action: pending.action,
          requested_by: pending.requested_by_actor,
        }
      : null,
    line: {
      id: Number(row.id),
      status: row.status,
      amount: formatThb(amount),
      amountSatang: amount,
      line_at: formatGatewayDateTime(row.line_at),
      imported_at: formatGatewayDateTime(row.created_at),
      waiting: ageLabel(new Date(row.created_at)),
      age_class: ageClass(new Date(row.created_at)),
      reference: row.reference,
      trans_ref: (row.trans_ref as string | null) ?? null,
      direction: row.direction as string,
      description: row.description,
      note: row.note,
      account: `${row.bank} ${row.account_no}`,
      account_name: row.account_name,
      decision: row.decision,
      decided_by: row.decided_by_actor,
      decided_at: row.decided_at ? formatGatewayDateTime(row.decided_at) : null,
      reason_code: row.reason_code,
      comment: row.comment,
      decided_order: row.decided_order,
      decided_merchant: row.decided_merchant,
      decided_merchant_name: row.decided_merchant_name,
      return_to: row.return_bank
        ? `${row.return_bank} ${row.return_account_no} (${row.return_account_name})`
        : null,
    },
    held,
    candidates,
    merchants: merchants.map((merchant) => ({
      value: merchant.merchant_id,
      label: `${merchant.merchant_id} · ${merchant.name}`,
    })),
    payer,
  }
}

/**
 * The payment orders a credit line may pay: named by its reference or
 * note, or on the same account with an amount within 1 THB and an order
 * time within a day of the line.
 */
async function paymentCandidates(
  row: Record<string, any>,
  amount: number,
  lineAt: Date,
  named: string[]
) {
  const candidates = await db
    .from('payment_orders as o')
    .join('merchants as m', 'm.id', 'o.merchant_id')
    .where('o.deposit_account_id', row.deposit_account_id)
    .where((query) => {
      if (named.length > 0) {
        query.whereIn('o.platform_order_id', named).orWhereIn('o.payment_reference', named)
      }
      query.orWhere((near) =>
        near
          .whereBetween('o.transfer_amount', [amount - 100, amount + 100])
          .whereBetween('o.order_at', [
            new Date(lineAt.getTime() - 86_400_000),
            new Date(lineAt.getTime() + 3_600_000),
          ])
      )
    })
    .orderByRaw('ABS(o.transfer_amount - ?)', [amount])
    .orderByRaw('ABS(TIMESTAMPDIFF(SECOND, o.order_at, ?))', [lineAt])
    .limit(10)
    .select(
      'o.platform_order_id',
      'o.status',
      'o.status_before_freeze',
      'o.amount',
      'o.transfer_amount',
      'o.order_at',
      'o.expire_at',
      'o.error_reason',
      'o.payment_reference',
      'm.merchant_id',
      'm.name as merchant_name'
    )
  return candidates.map((order) => {
    const why: string[] = []
    if (named.includes(order.platform_order_id) || named.includes(order.payment_reference)) {
      why.push('named by the line')
    }
    if (Number(order.transfer_amount) === amount) why.push('same amount')
    else why.push(`amount off by ${formatThb(Math.abs(Number(order.transfer_amount) - amount))}`)
    return {
      platform_order_id: order.platform_order_id,
      status:
        order.status === 'error' && order.error_reason
          ? `error (${order.error_reason})`
          : order.status,
      amount: formatThb(Number(order.amount)),
      transfer_amount: formatThb(Number(order.transfer_amount)),
      exact: Number(order.transfer_amount) === amount,
      order_at: formatGatewayDateTime(order.order_at),
      merchant_id: order.merchant_id,
      merchant_name: order.merchant_name,
      why: why.join(', '),
    }
  })
}

/**
 * A line's status and note, for the bulk "attach to the named order": a
 * late line's note names the expired order it paid. Null for no line.
 */
export async function lineStatusAndNote(id: number) {
  const row = await db.from('statement_lines').where('id', id).select('status', 'note').first()
  return row ? { status: String(row.status), note: (row.note as string | null) ?? null } : null
}
