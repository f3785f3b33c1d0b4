import { DateTime } from 'luxon'
import PaymentOrder from '#payments/models/payment_order'
import DepositAccount from '#payments/models/deposit_account'
import Platform from '#merchants/models/platform'
import Merchant from '#merchants/models/merchant'
import { qrPngDataUrl } from '#payments/qr_image'
import { formatThb } from '#core/money'
import { bankName } from '#core/banks'
import { formatGatewayDateTime } from '#core/clock'
import paymentsConfig from '#config/payments'

/** What the customer sees: the page follows this, not the raw status. */
export type PageState = 'pay' | 'redirect' | 'paid' | 'expired' | 'review'

export function pageState(order: PaymentOrder, now: DateTime = DateTime.utc()): PageState {
  if (order.status === 'unsettled_paid' || order.status === 'settled_paid') return 'paid'
  if (order.status === 'error') return 'expired'
  if (order.status === 'freeze' || order.awaitingReview) return 'review'
  // The QR must not be shown after expire_datetime, even before the expiry job ran.
  if (order.expireAt <= now) return 'expired'
  return order.channel === 'external' ? 'redirect' : 'pay'
}

/**
 * Whether the page offers the slip form: an open order paid by QR or bank
 * transfer, within the age limit, whose payment details or review are on
 * screen (not once the page says expired). The upload action checks the
 * order again under its row lock.
 */
export function acceptsSlips(order: PaymentOrder, now: DateTime = DateTime.utc()) {
  const state = pageState(order, now)
  return (
    order.status === 'open' &&
    order.channel !== 'external' &&
    (state === 'pay' || state === 'review') &&
    order.orderAt >= now.minus({ days: paymentsConfig.paymentPageSlips.maxOrderAgeDays })
  )
}

export async function findOrderByUuid(uuid: string) {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i.test(uuid))
    return null
  return PaymentOrder.query().where('uuid', uuid.toLowerCase()).first()
}

/** Everything the hosted page template needs, already formatted. */
export async function paymentPageView(order: PaymentOrder) {
  const account = await DepositAccount.findOrFail(order.depositAccountId)
  const merchant = await Merchant.findOrFail(order.merchantId)
  const platform = await Platform.findOrFail(merchant.platformId)
  const state = pageState(order)
  return {
    state,
    uuid: order.uuid,
    merchantName: merchant.name,
    platformName: platform.name,
    platformOrderId: order.platformOrderId,
    merchantOrderId: order.merchantOrderId,
    channel: order.channel,
    amount: formatThb(order.amount),
    transferAmount: formatThb(order.transferAmount),
    adjusted: order.transferAmount !== order.amount,
    qrDataUrl: state === 'pay' && order.qrcode ? await qrPngDataUrl(order.qrcode) : null,
    depositBank: account.bank,
    // Customers look for the bank's name in their app; the code is shown small beside it.
    depositBankName: { th: bankName(account.bank, 'th'), en: bankName(account.bank, 'en') },
    depositAccountNo: account.accountNo,
    depositAccountName: account.accountName,
    paymentReference: order.paymentReference,
    externalUrl: order.externalUrl ? absoluteUrl(order.externalUrl, platform) : null,
    expireAtMs: order.expireAt.toMillis(),
    expireDatetime: formatGatewayDateTime(order.expireAt),
    serverNowMs: Date.now(),
    acceptsSlips: acceptsSlips(order),
  }
}

/** The sandbox provider hands out relative URLs on the gateway itself. */
function absoluteUrl(url: string, platform: Platform) {
  if (/^https:\/\//.test(url)) return url
  return platform.paymentPageDomain ? `https://${platform.paymentPageDomain}${url}` : url
}
