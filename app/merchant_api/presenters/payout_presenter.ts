import type PayoutOrder from '#payouts/models/payout_order'
import { amountJson } from '#core/money'
import { formatGatewayDateTime } from '#core/clock'
import { PUBLIC_PAYOUT_STATUS } from '#payouts/payout_state'

/** /withdraw/create: no status, no done_datetime (spec). */
export function presentCreatedWithdraw(order: PayoutOrder) {
  return {
    platform_order_id: order.platformOrderId,
    merchant_order_id: order.merchantOrderId,
    order_datetime: formatGatewayDateTime(order.orderAt),
    amount: amountJson(order.amount),
    bank: order.bank,
    account_no: order.accountNo,
    account_name: order.accountName,
  }
}

/**
 * /thb-settlement/create: with the flat fee and status open, the status of
 * every order just created (and of this answer sent again later, whatever
 * the order became: /thb-settlement/query tells that).
 */
export function presentCreatedSettlement(order: PayoutOrder) {
  return {
    platform_order_id: order.platformOrderId,
    merchant_order_id: order.merchantOrderId,
    order_datetime: formatGatewayDateTime(order.orderAt),
    amount: amountJson(order.amount),
    fee: amountJson(order.fee),
    bank: order.bank,
    account_no: order.accountNo,
    account_name: order.accountName,
    status: PUBLIC_PAYOUT_STATUS.new,
  }
}

/** /withdraw/query (field order of the spec's withdraw query). */
export function presentWithdrawStatus(order: PayoutOrder) {
  return {
    platform_order_id: order.platformOrderId,
    merchant_order_id: order.merchantOrderId,
    order_datetime: formatGatewayDateTime(order.orderAt),
    bank: order.bank,
    account_no: order.accountNo,
    account_name: order.accountName,
    amount: amountJson(order.amount),
    status: PUBLIC_PAYOUT_STATUS[order.status],
    done_datetime: formatGatewayDateTime(order.doneAt),
  }
}

/** /thb-settlement/query (field order of the spec's settlement query). */
export function presentSettlementStatus(order: PayoutOrder) {
  return {
    platform_order_id: order.platformOrderId,
    merchant_order_id: order.merchantOrderId,
    order_datetime: formatGatewayDateTime(order.orderAt),
    amount: amountJson(order.amount),
    bank: order.bank,
    account_no: order.accountNo,
    account_name: order.accountName,
    status: PUBLIC_PAYOUT_STATUS[order.status],
    done_datetime: formatGatewayDateTime(order.doneAt),
  }
}
