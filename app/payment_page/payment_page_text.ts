/** Hosted payment page wording. Thai first: the customers are in Thailand. */
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
    paid: 'ได้รับชำระเงินแล้ว',
    paidDetail: 'ขอบคุณ ร้านค้าจะได้รับแจ้งผลการชำระเงิน',
    expired: 'รายการนี้หมดอายุแล้ว',
    expiredDetail: 'ห้ามโอนเงินตาม QR หรือบัญชีนี้ โปรดกลับไปที่ร้านค้าเพื่อสร้างรายการใหม่',
    review: 'กำลังตรวจสอบการชำระเงิน',
    reviewDetail: 'เจ้าหน้าที่กำลังตรวจสอบรายการนี้ ไม่ต้องโอนซ้ำ',
    redirecting: 'กำลังพาไปยังหน้าชำระเงินของผู้ให้บริการ',
    continue: 'ไปยังหน้าชำระเงิน',
    notFound: 'ไม่พบรายการชำระเงินนี้',
    notFoundDetail: 'ลิงก์อาจไม่ถูกต้อง โปรดกลับไปที่ร้านค้า',
    switchLanguage: 'English',
    slipUpload: 'อัปโหลดสลิป',
    slipUploadHint: 'โอนแล้วแต่ยังไม่ขึ้นว่าได้รับชำระ? ส่งรูปสลิปการโอนให้เจ้าหน้าที่ตรวจสอบ',
    slipAnother: 'ส่งรูปสลิปผิด? ส่งใหม่ได้ที่นี่',
    slipFile: 'รูปสลิป (PNG หรือ JPG)',
    slipSubmit: 'ส่งสลิป',
    slipNotice: {
      received: 'ได้รับสลิปแล้ว กำลังตรวจสอบ',
      missing: 'โปรดเลือกรูปสลิปก่อนกดส่ง',
      tooBig: 'ไฟล์ใหญ่เกินไป รูปสลิปต้องไม่เกิน {mb} MB',
      notImage: 'ไฟล์นี้ไม่ใช่รูปภาพ โปรดส่งรูปสลิปแบบ PNG หรือ JPG',
      wait: 'เพิ่งได้รับสลิปของรายการนี้ โปรดรอสักครู่ก่อนส่งอีกครั้ง',
      tooMany: 'ส่งสลิปของรายการนี้ครบจำนวนแล้ว เจ้าหน้าที่กำลังตรวจสอบ',
      rateLimited: 'มีการส่งมากเกินไป โปรดลองใหม่ในอีกหนึ่งนาที',
      closed: 'รายการนี้ไม่รับสลิปแล้ว',
      failed: 'ส่งสลิปไม่สำเร็จ โปรดลองใหม่อีกครั้ง',
    },
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
    paid: 'Payment received',
    paidDetail: 'Thank you. The merchant is being notified.',
    expired: 'This payment has expired',
    expiredDetail: 'Do not pay to this QR code or account. Go back to the merchant to start again.',
    review: 'Payment under review',
    reviewDetail: 'Our team is checking this payment. Do not pay again.',
    redirecting: 'Taking you to the payment provider',
    continue: 'Continue to payment',
    notFound: 'Payment not found',
    notFoundDetail: 'The link may be wrong. Please go back to the merchant.',
    switchLanguage: 'ภาษาไทย',
    slipUpload: 'Upload your payment slip',
    slipUploadHint:
      'Paid but not confirmed yet? Send a picture of your transfer slip for our team to check.',
    slipAnother: 'Sent the wrong picture? You can send another one here.',
    slipFile: 'Slip image (PNG or JPG)',
    slipSubmit: 'Upload slip',
    slipNotice: {
      received: 'slip received, verification pending.',
      missing: 'Please choose a picture of your slip first.',
      tooBig: 'The file is too large: a slip image can be {mb} MB at most.',
      notImage: 'This file is not a picture. Please send your slip as a PNG or JPG image.',
      wait: 'A slip for this payment was just received. Please wait a minute before sending another.',
      tooMany: 'The most slips this payment accepts have been sent. Our team is checking them.',
      rateLimited: 'Too many attempts. Please try again in a minute.',
      closed: 'This payment no longer accepts slips.',
      failed: 'The slip could not be sent. Please try again.',
    },
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
