import db from '@adonisjs/lucid/services/db'
import { assignmentsOf, itemsAssignedTo } from '#review/assignments'
import { ageClass, ageLabel } from '#review/queues'
import type { QueueFilter } from '#admin/queries/frozen_queue'
import { findApprovableAction } from '#approvals/approvable_actions'
import { formatGatewayDateTime } from '#core/clock'
import type { OperatorRole } from '#operators/roles'
import { formatThb } from '#core/money'
import Platform from '#merchants/models/platform'
import PaymentOrder from '#payments/models/payment_order'
import PaymentSlip from '#slips/models/payment_slip'
import { underlyingStatus } from '#payments/payment_rules'
import { slipEvidence } from '#reconciliation/payment_receipts'
import { lineClaimView, orderClaimView } from '#admin/views/receipt_claims'
import {
  previewPaymentReceipt,
  previewReceived,
  receivedVersusTransfer,
} from '#admin/views/receipt_previews'
import { receiptLineOf } from '#admin/views/receipt_lines'

const json = (value: unknown) =>
  (typeof value === 'string' ? JSON.parse(value) : (value ?? {})) as Record<string, any>

function describe(action: string, input: unknown) {
  const entry = findApprovableAction(action)
  if (!entry) return action
  try {
    return entry.describe(json(input))
  } catch {
    return action
  }
}

/** The least role that may decide on a request of `action` (unknown: admin). */
function approverRoleOf(action: string): OperatorRole {
  return findApprovableAction(action)?.approverRole ?? 'admin'
}

/**
 * A money-directing change's fields, the values when it was asked and the
 * ones asked (approval_requests.change_before / change_after), for the card.
 */
export function requestChange(row: Record<string, any>) {
  if (row.change_before === null && row.change_after === null) return null
  if (row.change_before === undefined && row.change_after === undefined) return null
  const before = json(row.change_before)
  const after = json(row.change_after)
  const shown = (value: unknown) =>
    value === null || value === undefined || value === ''
      ? '—'
      : typeof value === 'object'
        ? JSON.stringify(value)
        : String(value)
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])]
  return {
    fields: names.map((name) => ({
      name,
      before: shown(before[name]),
      after: shown(after[name]),
      changed: shown(before[name]) !== shown(after[name]),
    })),
  }
}

const TARGET_PAGES: Record<string, (id: string) => string> = {
  deposit_account: (id) => `/admin/deposit-accounts/${encodeURIComponent(id)}`,
  // A new account waiting to be added: the pool lists it with its request.
  new_deposit_account: () => '/admin/deposit-accounts',
  merchant: (id) => `/admin/merchants/${encodeURIComponent(id)}`,
  operator: () => `/admin/operators`,
}

function targetHref(row: Record<string, any>) {
  const page = TARGET_PAGES[String(row.target_type)]
  if (page) return page(String(row.target_id))
  if (row.target_type === 'payment') return `/admin/orders/${row.target_id}`
  if (row.target_type === 'platform') return `/admin/platforms/${row.target_id}`
  if (row.target_type === 'statement_line') return `/admin/review/lines/${row.target_id}`
  if (row.target_type === 'statement_import') return `/admin/statements/imports/${row.target_id}`
  // A payout's release: its page shows its bulk file at the bank and its timeline.
  if (row.target_type === 'withdraw' || row.target_type === 'settlement') {
    return `/admin/payouts/${row.target_id}`
  }
  return null
}

/**
 * The bank receipt behind a pending request, as the approver checks it:
 * for marking a payment paid, the slip's verification, the line approving
 * would take (or the receivable it would open) and the amount received;
 * for a decision on a statement line, the line and any claim on it. Read
 * without locks: approving finds and locks them again.
 */
async function requestReceipt(row: Record<string, any>) {
  const input = json(row.input)
  if (row.action === 'payment.mark_paid') {
    const order = await PaymentOrder.query()
      .where('platform_order_id', String(input.platform_order_id ?? ''))
      .preload('merchant')
      .first()
    if (!order) return null
    const slip = input.slip_id ? await PaymentSlip.find(input.slip_id) : null
    const payable = underlyingStatus(order) === 'open'
    const preview = payable
      ? await previewPaymentReceipt(order, slip ? slipEvidence(slip) : null)
      : null
    const amounts = receivedVersusTransfer(
      order,
      previewReceived(preview),
      order.merchant.paymentFeeRateBps
    )
    const policy = (input.amount_policy as string | undefined) ?? null
    return {
      kind: 'mark_paid' as const,
      order_status: order.status,
      payable,
      slip: slip
        ? {
            id: slip.id,
            href: `/admin/review/slips/${slip.id}`,
            trans_ref: slip.transRef,
            verification_status: slip.verificationStatus,
            verification_msg: slip.verificationMsg,
          }
        : null,
      preview,
      amounts,
      amount_policy: policy,
      /** The receipt is of another amount and the request did not say to credit it: approving is refused. */
      policy_missing: Boolean(amounts?.differs) && policy !== 'credit_received',
      claim: payable ? null : await orderClaimView(order.id),
    }
  }
  if (row.target_type === 'statement_line') {
    const line = await receiptLineOf(Number(row.target_id) || 0)
    if (!line) return null
    return {
      kind: 'line' as const,
      line,
      claim: await lineClaimView(line.id),
    }
  }
  return null
}

const operatorNames = async (ids: Array<number | null>) => {
  const wanted = [...new Set(ids.filter((id): id is number => id !== null))]
  if (wanted.length === 0) return new Map<number, string>()
  const rows = await db.from('operators').whereIn('id', wanted).select('id', 'email')
  return new Map(rows.map((row) => [Number(row.id), String(row.email)]))
}

/**
 * What an approver checks before deciding, beside the receipt: for a
 * payment, the order (its platform_order_id, merchant, amount and
 * transfer_amount), the slip's verification, the amount the slip says was
 * sent and who reviewed the slip; for a statement line, the line itself
 * (the deposit account's bank, time, amount, description) and the order
 * an attach names; for a platform setting, its value now and the one asked.
 * Read without locks, for reading only.
 */
async function requestFacts(row: Record<string, any>) {
  const input = json(row.input)
  const action = String(row.action)
  if (action === 'payment.mark_paid' || action === 'statement_line.attach') {
    const platformOrderId = String(input.platform_order_id ?? '')
    const order = platformOrderId
      ? await PaymentOrder.query()
          .where('platform_order_id', platformOrderId)
          .preload('merchant')
          .first()
      : null
    const slip =
      action === 'payment.mark_paid' && input.slip_id ? await PaymentSlip.find(input.slip_id) : null
    const slipAmount = slip ? slipEvidence(slip).facts?.amount : undefined
    const line = row.target_type === 'statement_line' ? await lineFacts(row.target_id) : null
    const names = await operatorNames([
      row.reviewed_by === null ? null : Number(row.reviewed_by),
      slip?.reviewedBy ?? null,
    ])
    const reviewerId =
      slip?.reviewedBy ?? (row.reviewed_by === null ? null : Number(row.reviewed_by))
    return {
      kind: 'payment' as const,
      order: order && {
        platform_order_id: order.platformOrderId,
        href: `/admin/orders/${encodeURIComponent(order.platformOrderId)}`,
        merchant: `${order.merchant.merchantId} — ${order.merchant.name}`,
        merchant_href: `/admin/merchants/${encodeURIComponent(order.merchant.merchantId)}`,
        amount: formatThb(order.amount),
        transfer_amount: formatThb(order.transferAmount),
        status: order.status,
      },
      slip: slip && {
        verification_status: slip.verificationStatus,
        verification_msg: slip.verificationMsg,
        amount: typeof slipAmount === 'number' ? formatThb(slipAmount) : null,
        reviewed_by:
          reviewerId === null ? null : (names.get(reviewerId) ?? `operator ${reviewerId}`),
      },
      line,
    }
  }
  if (row.target_type === 'statement_line') {
    return {
      kind: 'line' as const,
      line: await lineFacts(row.target_id),
      merchant: typeof input.merchant_id === 'string' ? input.merchant_id : null,
    }
  }
  if (action === 'payout.release_rejected') {
    // The payout and the amount are in the card's heading; the merchant whose balance gets it back here.
    const payout = await db
      .from('payout_orders as o')
      .join('merchants as m', 'm.id', 'o.merchant_id')
      .where('o.platform_order_id', String(row.target_id))
      .select('m.merchant_id')
      .first()
    return { kind: 'payout' as const, merchant: payout ? String(payout.merchant_id) : null }
  }
  if (row.target_type === 'platform') {
    const platform = await Platform.findBy('code', String(row.target_id))
    const money = (satang: unknown) =>
      satang === null || satang === undefined
        ? 'none (never required)'
        : `${formatThb(Number(satang))} THB`
    if (action === 'platform.four_eyes_threshold') {
      return {
        kind: 'setting' as const,
        setting: 'four_eyes_threshold',
        current: platform ? money(platform.fourEyesThreshold) : '—',
        requested: money(input.four_eyes_threshold),
      }
    }
    if (action === 'platform.enable_deposits') {
      return {
        kind: 'setting' as const,
        setting: 'deposits (killswitch)',
        current: platform ? (platform.depositEnabled ? 'on' : 'off') : '—',
        requested: 'on',
      }
    }
  }
  return null
}

/** A statement line as the approval card shows it: the deposit account's bank, when, how much, what the bank wrote. */
async function lineFacts(id: unknown) {
  const line = await db
    .from('statement_lines as l')
    .join('deposit_accounts as a', 'a.id', 'l.deposit_account_id')
    .where('l.id', Number(id) || 0)
    .select(
      'l.id',
      'l.direction',
      'l.amount',
      'l.line_at',
      'l.description',
      'a.bank',
      'a.account_no'
    )
    .first()
  if (!line) return null
  return {
    id: Number(line.id),
    href: `/admin/review/lines/${line.id}`,
    bank: `${line.bank} ${line.account_no}`,
    time: formatGatewayDateTime(new Date(line.line_at)),
    direction: String(line.direction),
    amount: formatThb(Number(line.amount)),
    description: String(line.description ?? ''),
  }
}

/**
 * The payment a money-moving request would pay (marking it paid, attaching a
 * line to it), when it is frozen now: approving is refused until it is
 * unfrozen. Read without locks; approving reads it again under the lock.
 */
async function frozenTarget(row: Record<string, any>) {
  if (row.action !== 'payment.mark_paid' && row.action !== 'statement_line.attach') return null
  const id = String(json(row.input).platform_order_id ?? '')
  const order = await PaymentOrder.query().where('platform_order_id', id).first()
  return order?.status === 'freeze' ? order.platformOrderId : null
}

/**
 * Pending approval requests, the oldest first (approval_requests'
 * (status, expires_at) index: every request expires a fixed time after it
 * was asked, so by expiry is by age).
 */
export async function pendingApprovals(filter: QueueFilter) {
  const query = db
    .from('approval_requests')
    .where('status', 'pending')
    .orderBy('expires_at', 'asc')
    .orderBy('id', 'asc')
  if (filter.mineOf !== null) {
    query.whereIn('id', itemsAssignedTo('approvals', filter.mineOf))
  }
  const page = await query.paginate(filter.page, filter.perPage)
  const rows = page.all()
  const holders = await assignmentsOf(
    'approvals',
    rows.map((row) => String(row.id))
  )
  const now = Date.now()
  const receipts = await Promise.all(rows.map((row) => requestReceipt(row)))
  const frozen = await Promise.all(rows.map((row) => frozenTarget(row)))
  const facts = await Promise.all(rows.map((row) => requestFacts(row)))
  return {
    page,
    rows: rows.map((row, index) => {
      const since = new Date(row.created_at)
      const holder = holders.get(String(row.id)) ?? null
      return {
        item_id: String(row.id),
        id: Number(row.id),
        kind: String(row.kind),
        what: describe(String(row.action), row.input),
        target_type: String(row.target_type),
        target_id: String(row.target_id),
        target_href: targetHref(row),
        amount: row.amount === null ? null : formatThb(Number(row.amount)),
        requested_by: String(row.requested_by_actor),
        requested_by_id: row.requested_by === null ? null : Number(row.requested_by),
        reviewed_by_id: row.reviewed_by === null ? null : Number(row.reviewed_by),
        approver_role: approverRoleOf(String(row.action)),
        reason_code: (row.reason_code as string | null) ?? null,
        comment: (row.comment as string | null) ?? null,
        requested: formatGatewayDateTime(since),
        age: ageLabel(since),
        age_class: ageClass(since),
        expires: formatGatewayDateTime(new Date(row.expires_at)),
        expired: new Date(row.expires_at).getTime() <= now,
        holder: holder?.operatorEmail ?? null,
        holder_id: holder?.operatorId ?? null,
        receipt: receipts[index],
        facts: facts[index],
        change: requestChange(row),
        frozen: frozen[index],
      }
    }),
  }
}

/**
 * The live pending requests concerning one target (a platform's page shows
 * the switch or threshold change waiting for a second admin), oldest first:
 * what, asked by whom and when, until when, and the approver role.
 */
export async function pendingRequestsOn(targetType: string, targetId: string) {
  const now = new Date()
  const rows = await db
    .from('approval_requests')
    .where('target_type', targetType)
    .where('target_id', targetId)
    .where('status', 'pending')
    .where('expires_at', '>', now)
    .orderBy('id', 'asc')
  return rows.map((row) => {
    const since = new Date(row.created_at)
    const action = String(row.action)
    return {
      id: Number(row.id),
      kind: String(row.kind),
      action,
      what: describe(action, row.input),
      requested_by: String(row.requested_by_actor),
      requested_by_id: row.requested_by === null ? null : Number(row.requested_by),
      reviewed_by_id: row.reviewed_by === null ? null : Number(row.reviewed_by),
      approver_role: approverRoleOf(action),
      reason_code: (row.reason_code as string | null) ?? null,
      comment: (row.comment as string | null) ?? null,
      requested: formatGatewayDateTime(since),
      age: ageLabel(since),
      age_class: ageClass(since),
      expires: formatGatewayDateTime(new Date(row.expires_at)),
      change: requestChange(row),
    }
  })
}

/** The latest decided requests (approved, rejected, expired, superseded), newest first. */
export async function recentDecidedApprovals(limit = 20) {
  const rows = await db
    .from('approval_requests')
    .whereIn('status', ['approved', 'rejected', 'expired', 'superseded'])
    .whereNotNull('decided_at')
    // Newest first by id: the primary key, no sort of the whole table.
    .orderBy('id', 'desc')
    .limit(limit)
  return rows.map((row) => ({
    id: Number(row.id),
    status: String(row.status),
    what: describe(String(row.action), row.input),
    target_href: targetHref(row),
    target_id: String(row.target_id),
    amount: row.amount === null ? null : formatThb(Number(row.amount)),
    requested_by: String(row.requested_by_actor),
    decided_by: (row.decided_by_actor as string | null) ?? '—',
    decided: formatGatewayDateTime(new Date(row.decided_at)),
    reason_code: (row.decision_reason_code as string | null) ?? null,
    comment: (row.decision_comment as string | null) ?? null,
  }))
}

export async function approvalCount() {
  const row = await db
    .from('approval_requests')
    .where('status', 'pending')
    .count('* as total')
    .first()
  return Number(row?.total ?? 0)
}
