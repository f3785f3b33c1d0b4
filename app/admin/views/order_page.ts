import PaymentOrder from '#payments/models/payment_order'
import PayoutOrder from '#payouts/models/payout_order'
import Merchant from '#merchants/models/merchant'
import PaymentSlip from '#slips/models/payment_slip'
import { PUBLIC_PAYOUT_STATUS } from '#payouts/payout_state'
import { KIND_OF_MARKER, ORDER_TYPE_OF_KIND, type OrderKind } from '#payments/order_filters'
import { orderTimeline } from '#core/order_events'
import { postingsOf } from '#ledger/order_postings'
import { statementLineOf } from '#reconciliation/order_statement_line'
import { slipDetails } from '#slips/slip_details'
import { statementLinesCarrying } from '#slips/forensics'
import { underlyingStatus } from '#payments/payment_rules'
import { orderClaimView } from '#admin/views/receipt_claims'
import { payoutConfirmationView } from '#admin/views/debit_confirmations'
import {
  previewPaymentReceipt,
  previewReceived,
  receivedVersusTransfer,
} from '#admin/views/receipt_previews'
import { callbacksOf } from '#callbacks/order_callbacks'
import { formatGatewayDateTime } from '#core/clock'
import { formatThb } from '#core/money'

/** One field of the order page: label, value, and how to show it. */
export interface OrderField {
  name: string
  label: string
  value: string | null
  href?: string
  mono?: boolean
}

const amount = (satang: number | null) => (satang === null ? null : formatThb(satang))

function paymentFields(order: PaymentOrder, merchant: Merchant): Array<[string, OrderField[]]> {
  const account = order.depositAccount
  return [
    [
      'Order',
      [
        {
          name: 'platform_order_id',
          label: 'platform_order_id',
          value: order.platformOrderId,
          mono: true,
        },
        {
          name: 'merchant_order_id',
          label: 'merchant_order_id',
          value: order.merchantOrderId,
          mono: true,
        },
        { name: 'uuid', label: 'uuid', value: order.uuid, mono: true, href: `/pay/${order.uuid}` },
        {
          name: 'merchant',
          label: 'Merchant',
          value: `${merchant.merchantId} · ${merchant.name}`,
          href: `/admin/merchants/${merchant.merchantId}`,
        },
        { name: 'payment_type', label: 'payment_type', value: order.paymentType },
        { name: 'status', label: 'status', value: order.status },
        { name: 'status_before_freeze', label: 'Frozen from', value: order.statusBeforeFreeze },
        {
          name: 'awaiting_review',
          label: 'Awaiting slip review',
          value: order.awaitingReview ? 'yes' : 'no',
        },
        { name: 'error_reason', label: 'Error reason', value: order.errorReason },
        { name: 'notify_url', label: 'notify_url', value: order.notifyUrl, mono: true },
      ],
    ],
    [
      'Money (THB)',
      [
        { name: 'amount', label: 'amount', value: amount(order.amount) },
        { name: 'transfer_amount', label: 'transfer_amount', value: amount(order.transferAmount) },
        { name: 'fee', label: 'Fee (set when paid)', value: amount(order.fee) },
        {
          name: 'paid_amount',
          label: 'paid_amount (credited before the fee)',
          value: amount(order.paidAmount),
        },
        { name: 'slot_amount', label: 'Slot held', value: amount(order.slotAmount) },
      ],
    ],
    [
      'Channel',
      [
        { name: 'channel', label: 'Channel', value: order.channel },
        {
          name: 'deposit_account',
          label: 'Deposit account',
          value: `${account.id} · ${account.bank} ${account.accountNo} · ${account.accountName}`,
          href: `/admin/deposit-accounts/${account.id}`,
        },
        {
          name: 'payment_reference',
          label: 'Payment reference (ref1)',
          value: order.paymentReference,
          mono: true,
        },
        {
          name: 'external_reference',
          label: 'Provider reference',
          value: order.externalReference,
          mono: true,
        },
      ],
    ],
    [
      'Customer',
      [
        { name: 'customer_bank', label: 'bank', value: order.customerBank },
        {
          name: 'customer_account_no',
          label: 'account_no',
          value: order.customerAccountNo,
          mono: true,
        },
        { name: 'customer_account_name', label: 'account_name', value: order.customerAccountName },
      ],
    ],
    [
      'Times (GMT+7)',
      [
        {
          name: 'order_datetime',
          label: 'order_datetime',
          value: formatGatewayDateTime(order.orderAt),
        },
        {
          name: 'expire_datetime',
          label: 'expire_datetime',
          value: formatGatewayDateTime(order.expireAt),
        },
        {
          name: 'payment_datetime',
          label: 'payment_datetime',
          value: formatGatewayDateTime(order.paidAt),
        },
        {
          name: 'settled_datetime',
          label: 'Settled',
          value: formatGatewayDateTime(order.settledAt),
        },
        { name: 'closed_datetime', label: 'Closed', value: formatGatewayDateTime(order.closedAt) },
        {
          name: 'updated_datetime',
          label: 'Last change',
          value: formatGatewayDateTime(order.updatedAt),
        },
      ],
    ],
  ]
}

function payoutFields(order: PayoutOrder, merchant: Merchant): Array<[string, OrderField[]]> {
  return [
    [
      'Order',
      [
        {
          name: 'platform_order_id',
          label: 'platform_order_id',
          value: order.platformOrderId,
          mono: true,
        },
        {
          name: 'merchant_order_id',
          label: 'merchant_order_id',
          value: order.merchantOrderId,
          mono: true,
        },
        {
          name: 'merchant',
          label: 'Merchant',
          value: `${merchant.merchantId} · ${merchant.name}`,
          href: `/admin/merchants/${merchant.merchantId}`,
        },
        { name: 'status', label: 'status (public)', value: PUBLIC_PAYOUT_STATUS[order.status] },
        { name: 'internal_status', label: 'Internal status', value: order.status },
        { name: 'failure_reason', label: 'Failure reason', value: order.failureReason },
        { name: 'notify_url', label: 'notify_url', value: order.notifyUrl, mono: true },
      ],
    ],
    [
      'Money (THB)',
      [
        { name: 'amount', label: 'amount', value: amount(order.amount) },
        { name: 'fee', label: 'fee', value: amount(order.fee) },
        { name: 'total', label: 'Held (amount + fee)', value: amount(order.total) },
        { name: 'hold_state', label: 'Hold', value: order.holdState },
        {
          name: 'hold_expires',
          label: 'Hold released at',
          value: formatGatewayDateTime(order.holdExpiresAt),
        },
      ],
    ],
    [
      'Destination',
      [
        { name: 'bank', label: 'bank', value: order.bank },
        { name: 'account_no', label: 'account_no', value: order.accountNo, mono: true },
        { name: 'account_name', label: 'account_name', value: order.accountName },
      ],
    ],
    [
      'Bank',
      [
        { name: 'connector', label: 'Connector', value: order.connector },
        {
          name: 'connector_reference',
          label: 'Bank reference',
          value: order.connectorReference,
          mono: true,
        },
        { name: 'batch_id', label: 'Bulk-file batch', value: order.batchId, mono: true },
      ],
    ],
    [
      'Times (GMT+7)',
      [
        {
          name: 'order_datetime',
          label: 'order_datetime',
          value: formatGatewayDateTime(order.orderAt),
        },
        {
          name: 'done_datetime',
          label: 'done_datetime',
          value: formatGatewayDateTime(order.doneAt),
        },
        {
          name: 'updated_datetime',
          label: 'Last change',
          value: formatGatewayDateTime(order.updatedAt),
        },
      ],
    ],
  ]
}

/**
 * A payment's bank receipt: the claim that credited it (its statement line,
 * or the receivable it was credited from while its line has not arrived),
 * or, while it can still be marked paid, what marking it paid would take
 * now; the amount received against transfer_amount and the credit it gives.
 */
async function paymentReceipt(order: PaymentOrder, merchant: Merchant) {
  const claim = await orderClaimView(order.id)
  const payable = underlyingStatus(order) === 'open'
  const preview = !claim && payable ? await previewPaymentReceipt(order, null) : null
  const received = claim ? claim.received_satang : previewReceived(preview)
  const amounts = receivedVersusTransfer(order, received, merchant.paymentFeeRateBps)
  return {
    claim,
    preview,
    amounts,
    /** Marking it paid needs amount_policy: the receipt it would take is of another amount. */
    policy: !claim && payable && amounts?.differs ? amounts : null,
  }
}

/**
 * A withdrawal's or settlement's transfer out, tied to the bank
 * (docs/reconciliation.md, "Money out"): `confirmed` by its debit line,
 * `waiting` for it (an open item, since the payout succeeded), `open` (no
 * money left yet: the payout is not final), `none` (it failed: nothing
 * left), or `unrecorded` (a success without its transfer recorded:
 * reconcile:verify's transfer_unrecorded).
 */
async function payoutBank(order: PayoutOrder) {
  const confirmation = await payoutConfirmationView(order.id)
  const state: 'confirmed' | 'waiting' | 'open' | 'none' | 'unrecorded' = confirmation
    ? confirmation.line
      ? 'confirmed'
      : 'waiting'
    : order.status === 'success'
      ? 'unrecorded'
      : PUBLIC_PAYOUT_STATUS[order.status] === 'open'
        ? 'open'
        : 'none'
  return { state, confirmation, status: order.status }
}

/**
 * Everything the order page shows for one platform_order_id: the fields,
 * the timeline of its events (who, when, from → to, why), its ledger
 * postings, the statement line matched to it, its bank receipt (payments:
 * the claim that credited it, or what marking it paid would take; payouts:
 * the debit line that confirms the transfer, or the wait for it), its
 * slips and its callbacks with every attempt. Null: no such order.
 */
export async function orderPage(platformOrderId: string) {
  if (!/^[A-Za-z0-9]{24}$/.test(platformOrderId)) return null
  const kind: OrderKind | undefined = KIND_OF_MARKER[platformOrderId[3]]
  if (!kind) return null
  const orderType = ORDER_TYPE_OF_KIND[kind]

  let id: number
  let merchant: Merchant
  let sections: Array<[string, OrderField[]]>
  let status: string
  let slips: ReturnType<typeof slipDetails>[] = []
  let receipt: Awaited<ReturnType<typeof paymentReceipt>> | null = null
  let bank: Awaited<ReturnType<typeof payoutBank>> | null = null
  if (kind === 'payments') {
    const order = await PaymentOrder.query()
      .where('platform_order_id', platformOrderId)
      .preload('merchant')
      .preload('depositAccount')
      .first()
    if (!order) return null
    id = order.id
    merchant = order.merchant
    status = order.status
    sections = paymentFields(order, merchant)
    const rows = await PaymentSlip.query().where('payment_order_id', order.id).orderBy('id', 'desc')
    const live = await statementLinesCarrying(rows.map((slip) => slip.transRef))
    slips = rows.map((slip) =>
      slipDetails(slip, { statementLines: slip.transRef ? live.get(slip.transRef) : undefined })
    )
    receipt = await paymentReceipt(order, merchant)
  } else {
    const order = await PayoutOrder.query()
      .where('platform_order_id', platformOrderId)
      .where('kind', orderType)
      .first()
    if (!order) return null
    id = order.id
    merchant = await Merchant.findOrFail(order.merchantId)
    status = order.status
    sections = payoutFields(order, merchant)
    bank = await payoutBank(order)
  }

  const events = await orderTimeline(orderType, id)
  return {
    kind,
    orderType,
    platformOrderId,
    status,
    merchantId: merchant.merchantId,
    sections: sections.map(([title, fields]) => ({ title, fields })),
    timeline: events.map((event) => ({
      time: formatGatewayDateTime(event.createdAt),
      actor: event.actor,
      from: event.fromStatus,
      to: event.toStatus,
      reason: event.reason,
    })),
    postings: await postingsOf({ type: orderType, id: platformOrderId }),
    statementLine: await statementLineOf(orderType, id),
    receipt,
    bank,
    slips,
    callbacks: await callbacksOf(orderType, id),
  }
}

export type OrderPage = NonNullable<Awaited<ReturnType<typeof orderPage>>>
