import { ORDER_MESSAGES, SLIP_MESSAGES, type SlipOutcome } from '#payment_page/customer_messages'

/** The slip notices in one language, by the camelCase names the page uses. */
function slipNoticeText(lang: 'th' | 'en') {
  const text = (outcome: SlipOutcome) => SLIP_MESSAGES[outcome][lang]
  return {
    received: text('received'),
    missing: text('missing'),
    tooBig: text('too-big'),
    notImage: text('not-image'),
    wait: text('wait'),
    tooMany: text('too-many'),
    rateLimited: text('rate-limited'),
    closed: text('closed'),
    failed: text('failed'),
  }
}

/**
 * Hosted payment page wording. Thai first: the customers are in Thailand.
 * What the page reports (order states, slip outcomes) comes from
 * customer_messages.ts; the labels around it are here.
 */
export const PAGE_TEXT = {
  th: {
    title: 'ชำระเงิน',
    amountToTransfer: 'ยอดที่ต้องโอน',
    exactAmountWarning: 'โปรดโอนให้ตรงยอดนี้ทุกสตางค์ ยอดอื่นระบบจะจับคู่กับรายการนี้ไม่ได้',
    adjustedNote: 'ยอดสั่งซื้อ',
    scanQr: 'สแกน QR ด้วยแอปธนาคารเพื่อชำระ',
    orTransferTo: 'หรือโอนเข้าบัญชี',
    transferTo: 'โอนเข้าบัญชี',
    bank: 'ธนาคาร',
    accountNo: 'เลขที่บัญชี',
    accountName: 'ชื่อบัญชี',
    reference: 'รหัสอ้างอิง',
    timeLeft: 'เวลาที่เหลือ',
    expiresAt: 'หมดอายุ',
    orderId: 'เลขที่รายการ',
    paid: ORDER_MESSAGES.paid.th,
    paidDetail: ORDER_MESSAGES.paidDetail.th,
    expired: ORDER_MESSAGES.expired.th,
    expiredDetail: ORDER_MESSAGES.expiredDetail.th,
    review: ORDER_MESSAGES.review.th,
    reviewDetail: ORDER_MESSAGES.reviewDetail.th,
    redirecting: 'กำลังพาไปยังหน้าชำระเงินของผู้ให้บริการ',
    continue: 'ไปยังหน้าชำระเงิน',
    notFound: ORDER_MESSAGES.notFound.th,
    notFoundDetail: ORDER_MESSAGES.notFoundDetail.th,
    switchLanguage: 'English',
    slipUpload: 'อัปโหลดสลิป',
    slipUploadHint: 'โอนแล้วแต่ยังไม่ขึ้นว่าได้รับชำระ? ส่งรูปสลิปการโอนให้เจ้าหน้าที่ตรวจสอบ',
    slipAnother: 'ส่งรูปสลิปผิด? ส่งใหม่ได้ที่นี่',
    slipFile: 'รูปสลิป (PNG หรือ JPG)',
    slipSubmit: 'ส่งสลิป',
    slipNotice: slipNoticeText('th'),
  },
  en: {
    title: 'Payment',
    amountToTransfer: 'Amount to transfer',
    exactAmountWarning:
      'Transfer exactly this amount, to the satang. Any other amount cannot be matched to this payment.',
    adjustedNote: 'Order amount',
    scanQr: 'Scan the QR code with your banking app',
    orTransferTo: 'Or transfer to',
    transferTo: 'Transfer to',
    bank: 'Bank',
    accountNo: 'Account number',
    accountName: 'Account name',
    reference: 'Reference',
    timeLeft: 'Time left',
    expiresAt: 'Expires',
    orderId: 'Order',
    paid: ORDER_MESSAGES.paid.en,
    paidDetail: ORDER_MESSAGES.paidDetail.en,
    expired: ORDER_MESSAGES.expired.en,
    expiredDetail: ORDER_MESSAGES.expiredDetail.en,
    review: ORDER_MESSAGES.review.en,
    reviewDetail: ORDER_MESSAGES.reviewDetail.en,
    redirecting: 'Taking you to the payment provider',
    continue: 'Continue to payment',
    notFound: ORDER_MESSAGES.notFound.en,
    notFoundDetail: ORDER_MESSAGES.notFoundDetail.en,
    switchLanguage: 'ภาษาไทย',
    slipUpload: 'Upload your payment slip',
    slipUploadHint:
      'Paid but not confirmed yet? Send a picture of your transfer slip for our team to check.',
    slipAnother: 'Sent the wrong picture? You can send another one here.',
    slipFile: 'Slip image (PNG or JPG)',
    slipSubmit: 'Upload slip',
    slipNotice: slipNoticeText('en'),
  },
} as const

export type PageLanguage = keyof typeof PAGE_TEXT

/** The outcome of a slip upload, as the page's `?slip=` flag names it. */
export const SLIP_NOTICES = {
  'received': 'received',
  'missing': 'missing',
  'too-big': 'tooBig',
  'not-image': 'notImage',
  'wait': 'wait',
  'too-many': 'tooMany',
  'rate-limited': 'rateLimited',
  'closed': 'closed',
  'failed': 'failed',
} as const

export type SlipNotice = keyof typeof SLIP_NOTICES

export function slipNotice(flag: unknown): SlipNotice | null {
  return typeof flag === 'string' && Object.hasOwn(SLIP_NOTICES, flag) ? (flag as SlipNotice) : null
}

export function pageLanguage(query: unknown, acceptLanguage: string | undefined): PageLanguage {
  if (query === 'en' || query === 'th') return query
  return acceptLanguage && /^en\b/i.test(acceptLanguage.trim()) ? 'en' : 'th'
}
