import type PaymentOrder from '#payments/models/payment_order'
import type Platform from '#merchants/models/platform'
import type DepositAccount from '#payments/models/deposit_account'
import { amountJson } from '#core/money'
import { formatGatewayDateTime } from '#core/clock'

/** https://<payment_page_domain>/pay/<uuid>, or null without a domain. */
export function paymentUrl(platform: Platform, order: PaymentOrder): string | null {
  return platform.paymentPageDomain
    ? `https://${platform.paymentPageDomain}/pay/${order.uuid}`
    : null
}

/** Response data of the three create endpoints, field order as in the spec tables. */
export function presentCreatedPayment(
  order: PaymentOrder,
  platform: Platform,
  account: DepositAccount
) {
  const common = {
    platform_order_id: order.platformOrderId,
    merchant_order_id: order.merchantOrderId,
    uuid: order.uuid,
    order_datetime: formatGatewayDateTime(order.orderAt),
    expire_datetime: formatGatewayDateTime(order.expireAt),
    amount: amountJson(order.amount),
  }
  if (order.paymentType === 'FLEX') {
    return { ...common, payment_type: 'FLEX', payment_url: paymentUrl(platform, order) }
  }
  if (order.paymentType === 'TRANSFER') {
    return {
      ...common,
      transfer_amount: amountJson(order.transferAmount),
      payment_type: 'TRANSFER',
      qrcode: null,
      deposit_bank: account.bank,
      deposit_account_no: account.accountNo,
      deposit_account_name: account.accountName,
      payment_url: paymentUrl(platform, order),
    }
  }
  return {
    ...common,
    transfer_amount: amountJson(order.transferAmount),
    payment_type: 'QR',
    qrcode: order.qrcode,
    payment_url: paymentUrl(platform, order),
  }
}

/** Response data of /payment/query. */
export function presentPaymentStatus(order: PaymentOrder) {
  return {
    platform_order_id: order.platformOrderId,
    merchant_order_id: order.merchantOrderId,
    order_datetime: formatGatewayDateTime(order.orderAt),
    amount: amountJson(order.amount),
    status: order.status,
    expire_datetime: formatGatewayDateTime(order.expireAt),
    payment_datetime: formatGatewayDateTime(order.paidAt),
  }
}
