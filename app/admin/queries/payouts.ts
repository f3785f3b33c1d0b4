import db from '@adonisjs/lucid/services/db'
import { BANKS } from '#core/banks'
import { formatThb } from '#core/money'
import { formatGatewayDateTime } from '#core/clock'
import { PAYOUT_CONNECTOR_NAMES } from '#payouts/connectors/registry'
import {
  OPEN_PAYOUT_STATUSES,
  PUBLIC_PAYOUT_STATUS,
  type PayoutStatus,
} from '#payouts/payout_state'
import { retryDispatchRefusal } from '#payouts/actions/retry_payout_dispatch'
import { releaseRefusal } from '#payouts/actions/release_rejected_payout'
import { isAtTheBank } from '#payouts/at_the_bank'
import { orderTimeline } from '#core/order_events'
import PayoutOrder from '#payouts/models/payout_order'

/** What each waiting status means, as the list explains it. */
export const WAITING_MEANING = {
  new: 'not dispatched yet',
  queue: 'queued: not sent to the bank yet',
  pending: 'handed over: waiting for the bank’s answer',
} as const satisfies Partial<Record<PayoutStatus, string>>
export type WaitingStatus = keyof typeof WAITING_MEANING

/**
 * The internal statuses of a payout still waiting on a bank, in the order
 * they come: the state machine's open ones (app/payouts/payout_state.ts),
 * each with its meaning above.
 */
export const WAITING_STATUSES = OPEN_PAYOUT_STATUSES as readonly WaitingStatus[]

/** Filters of the waiting-payouts list (all optional, whitelisted). */
export interface WaitingPayoutFilters {
  status?: WaitingStatus
  bank?: string
  route?: string
  /** The merchant's public merchant_id, exactly. */
  merchant?: string
}

export function waitingPayoutFilters(input: Record<string, unknown>): WaitingPayoutFilters {
  const text = (key: string) =>
    String(input[key] ?? '')
      .trim()
      .slice(0, 32) || undefined
  const status = text('status')
  const bank = text('bank')
  const route = text('route')
  return {
    status: (WAITING_STATUSES as readonly string[]).includes(status ?? '')
      ? (status as WaitingStatus)
      : undefined,
    bank: bank && Object.hasOwn(BANKS, bank) ? bank : undefined,
    route: route && PAYOUT_CONNECTOR_NAMES.includes(route) ? route : undefined,
    merchant: text('merchant'),
  }
}

/** "45 s", "12 min", "3 h 05 min", "2 d 4 h": how long an order has been waiting. */
export function waitingFor(since: Date, now = Date.now()) {
  const seconds = Math.max(0, Math.floor((now - since.getTime()) / 1000))
  if (seconds < 60) return `${seconds} s`
  const minutes = Math.floor(seconds / 60)
  if (minutes < 60) return `${minutes} min`
  const hours = Math.floor(minutes / 60)
  if (hours < 24) return `${hours} h ${String(minutes % 60).padStart(2, '0')} min`
  return `${Math.floor(hours / 24)} d ${hours % 24} h`
}

const asDate = (value: unknown) => (value instanceof Date ? value : new Date(String(value)))

/**
 * A page of withdrawals and settlements still waiting on a bank (new, queue,
 * pending), oldest first, with their merchant. Reads by status (index
 * `status, hold_state, hold_expires_at`); the waiting orders are few beside
 * the final ones.
 */
export async function waitingPayouts(filters: WaitingPayoutFilters, page: number, perPage = 25) {
  const query = db
    .from('payout_orders')
    .join('merchants', 'merchants.id', 'payout_orders.merchant_id')
    .whereIn('payout_orders.status', filters.status ? [filters.status] : [...WAITING_STATUSES])
    .select(
      'payout_orders.id',
      'payout_orders.platform_order_id',
      'payout_orders.kind',
      'payout_orders.merchant_order_id',
      'payout_orders.amount',
      'payout_orders.fee',
      'payout_orders.bank',
      'payout_orders.account_no',
      'payout_orders.account_name',
      'payout_orders.status',
      'payout_orders.hold_state',
      'payout_orders.hold_expires_at',
      'payout_orders.connector',
      'payout_orders.connector_reference',
      'payout_orders.batch_id',
      'payout_orders.created_at',
      'merchants.merchant_id',
      'merchants.name as merchant_name'
    )
    .orderBy('payout_orders.id', 'asc')
  if (filters.bank) query.where('payout_orders.bank', filters.bank)
  if (filters.route) query.where('payout_orders.connector', filters.route)
  if (filters.merchant) query.where('merchants.merchant_id', filters.merchant)

  const result = await query.paginate(page, perPage)
  const now = Date.now()
  return {
    page: result,
    rows: result.all().map((row) => {
      const status = row.status as WaitingStatus
      const platformOrderId = row.platform_order_id as string
      return {
        platform_order_id: platformOrderId,
        kind: row.kind as string,
        merchant_order_id: row.merchant_order_id as string,
        merchant_id: row.merchant_id as string,
        merchant_name: row.merchant_name as string,
        amount: formatThb(Number(row.amount)),
        fee: formatThb(Number(row.fee)),
        bank: row.bank as string,
        account_no: row.account_no as string,
        account_name: row.account_name as string,
        status,
        meaning: WAITING_MEANING[status],
        hold_state: row.hold_state as string,
        hold_expires_at: formatGatewayDateTime(asDate(row.hold_expires_at)),
        route: row.connector as string,
        connector_reference: row.connector_reference as string | null,
        batch_id: row.batch_id as string | null,
        created_at: formatGatewayDateTime(asDate(row.created_at)),
        waiting: waitingFor(asDate(row.created_at), now),
        can_record_answer: status === 'pending',
        can_retry_dispatch:
          retryDispatchRefusal({ platformOrderId, status, connector: row.connector }) === null,
      }
    }),
  }
}

/**
 * Bulk-file payouts waiting in queue for their bank's file, per destination
 * bank (index `connector, status`): what "Download bulk payout file" would
 * export for each bank.
 */
export async function bulkFileQueue() {
  const rows = await db
    .from('payout_orders')
    .where('connector', 'bulk_file')
    .where('status', 'queue')
    .groupBy('bank')
    .orderBy('bank')
    .select('bank')
    .count('* as orders')
    .sum('amount as total')
  return rows.map((row) => ({
    bank: row.bank as string,
    orders: Number(row.orders),
    total: formatThb(Number(row.total)),
  }))
}

/** The last bulk payout files exported (from their audit rows, index `action, created_at`). */
export async function recentBulkFiles(limit = 10) {
  const rows = await db
    .from('audit_logs')
    .where('action', 'payouts.export')
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .select('subject_id', 'actor', 'details', 'created_at')
  return rows.flatMap((row) => {
    const details = (typeof row.details === 'string' ? JSON.parse(row.details) : row.details) as {
      files?: Array<{ file: string; bank: string; orders: number; total: string }>
    } | null
    return (details?.files ?? []).map((file) => ({
      batch_id: row.subject_id as string,
      file: file.file,
      bank: file.bank,
      orders: file.orders,
      total: file.total,
      actor: row.actor as string,
      exported_at: formatGatewayDateTime(asDate(row.created_at)),
    }))
  })
}

/** One withdrawal or settlement as the "record the bank's answer" page shows it; null: none. */
export async function payoutPage(platformOrderId: string) {
  const order = await PayoutOrder.findBy('platform_order_id', platformOrderId)
  if (!order) return null
  const merchant = await db
    .from('merchants')
    .where('id', order.merchantId)
    .select('merchant_id', 'name')
    .firstOrFail()
  const events = await orderTimeline(order.kind, order.id)
  const status: PayoutStatus = order.status
  return {
    platform_order_id: order.platformOrderId,
    kind: order.kind,
    merchant_order_id: order.merchantOrderId,
    merchant_id: merchant.merchant_id as string,
    merchant_name: merchant.name as string,
    amount: formatThb(order.amount),
    fee: formatThb(order.fee),
    total: formatThb(order.total),
    bank: order.bank,
    account_no: order.accountNo,
    account_name: order.accountName,
    status,
    public_status: PUBLIC_PAYOUT_STATUS[status],
    meaning: WAITING_MEANING[status as WaitingStatus] ?? 'final',
    hold_state: order.holdState,
    hold_expires_at: formatGatewayDateTime(order.holdExpiresAt),
    route: order.connector,
    connector_reference: order.connectorReference,
    batch_id: order.batchId,
    failure_reason: order.failureReason,
    created_at: formatGatewayDateTime(order.createdAt),
    done_at: formatGatewayDateTime(order.doneAt),
    waiting: waitingFor(order.createdAt.toJSDate()),
    can_record_answer: status === 'pending',
    retry_refusal: retryDispatchRefusal(order),
    /** Its bulk file is at the bank: the hold stays until a line, or a release, settles it. */
    at_the_bank: isAtTheBank(order),
    /** Why it cannot be released as rejected by the bank now (null: it can be asked). */
    release_refusal: await releaseRefusal(db.connection(), order),
    events: events.map((event) => ({
      time: formatGatewayDateTime(event.createdAt),
      from: event.fromStatus,
      to: event.toStatus,
      actor: event.actor,
      reason: event.reason,
    })),
  }
}
