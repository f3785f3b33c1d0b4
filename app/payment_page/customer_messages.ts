/**
 * Everything the hosted payment page tells a customer about what happened,
 * in Thai and in English, by the outcome it reports: the order's state, each
 * outcome of a slip upload (the `?slip=` flags of the page), and the error
 * pages of /pay/. The merchant API's own messages ("slip received,
 * verification pending.") are for merchants and never reach a customer:
 * they are written for a developer reading JSON, not for someone who has
 * just paid.
 */

export interface CustomerMessage {
  th: string
  en: string
}

/** The order's state as the page shows it (app/payment_page/payment_page.ts pageState). */
export const ORDER_MESSAGES = {
  paid: {
    th: 'ได้รับชำระเงินแล้ว',
    en: 'Payment received',
  },
  paidDetail: {
    th: 'ขอบคุณ ร้านค้าจะได้รับแจ้งผลการชำระเงิน',
    en: 'Thank you. The merchant is being notified.',
  },
  expired: {
    th: 'รายการนี้หมดอายุแล้ว',
    en: 'This payment has expired',
  },
  expiredDetail: {
    th: 'ห้ามโอนเงินตาม QR หรือบัญชีนี้ โปรดกลับไปที่ร้านค้าเพื่อสร้างรายการใหม่',
    en: 'Do not pay to this QR code or account. Go back to the merchant to start again.',
  },
  review: {
    th: 'กำลังตรวจสอบการชำระเงิน',
    en: 'Payment under review',
  },
  reviewDetail: {
    th: 'เจ้าหน้าที่กำลังตรวจสอบรายการนี้ ไม่ต้องโอนซ้ำ',
    en: 'Our team is checking this payment. Do not pay again.',
  },
  notFound: {
    th: 'ไม่พบรายการชำระเงินนี้',
    en: 'Payment not found',
  },
  notFoundDetail: {
    th: 'ลิงก์อาจไม่ถูกต้อง โปรดกลับไปที่ร้านค้า',
    en: 'The link may be wrong. Please go back to the merchant.',
  },
} satisfies Record<string, CustomerMessage>

/**
 * The outcome of a slip upload from the page, by its `?slip=` flag
 * (payment_page_text.ts SLIP_NOTICES). `{mb}` is the page's size limit.
 */
export const SLIP_MESSAGES = {
  // Whatever the verification found stays with operators: the customer only learns it arrived.
  'received': {
    th: 'ได้รับสลิปแล้ว กำลังตรวจสอบ ไม่ต้องโอนซ้ำ',
    en: 'We have your slip and are checking it. Please do not pay again.',
  },
  'missing': {
    th: 'โปรดเลือกรูปสลิปก่อนกดส่ง',
    en: 'Please choose a picture of your slip first.',
  },
  'too-big': {
    th: 'ไฟล์ใหญ่เกินไป รูปสลิปต้องไม่เกิน {mb} MB',
    en: 'The file is too large: a slip image can be {mb} MB at most.',
  },
  'not-image': {
    th: 'ไฟล์นี้ไม่ใช่รูปภาพ โปรดส่งรูปสลิปแบบ PNG หรือ JPG',
    en: 'This file is not a picture. Please send your slip as a PNG or JPG image.',
  },
  'wait': {
    th: 'เพิ่งได้รับสลิปของรายการนี้ โปรดรอสักครู่ก่อนส่งอีกครั้ง',
    en: 'A slip for this payment was just received. Please wait a minute before sending another.',
  },
  'too-many': {
    th: 'ส่งสลิปของรายการนี้ครบจำนวนแล้ว เจ้าหน้าที่กำลังตรวจสอบ',
    en: 'The most slips this payment accepts have been sent. Our team is checking them.',
  },
  'rate-limited': {
    th: 'มีการส่งมากเกินไป โปรดลองใหม่ในอีกหนึ่งนาที',
    en: 'Too many attempts. Please try again in a minute.',
  },
  'closed': {
    th: 'รายการนี้ไม่รับสลิปแล้ว',
    en: 'This payment no longer accepts slips.',
  },
  'failed': {
    th: 'ส่งสลิปไม่สำเร็จ โปรดลองใหม่อีกครั้ง',
    en: 'The slip could not be sent. Please try again.',
  },
} satisfies Record<string, CustomerMessage>

export type SlipOutcome = keyof typeof SLIP_MESSAGES

/** A heading and a detail line of an error page. */
export interface ErrorPageText {
  heading: CustomerMessage
  detail: CustomerMessage
}

/**
 * The plain error pages of /pay/ (app/exceptions/handler.ts), which show
 * both languages: they are answered before the page's language is known.
 */
export const ERROR_PAGE_MESSAGES = {
  notFound: {
    heading: { th: 'ไม่พบหน้านี้', en: 'Page not found' },
    detail: {
      th: 'ลิงก์อาจไม่ถูกต้อง โปรดกลับไปที่ร้านค้า',
      en: 'The link may be wrong. Please go back to the merchant.',
    },
  },
  refused: {
    heading: { th: 'ไม่สามารถดำเนินการตามคำขอนี้ได้', en: 'This request cannot be processed' },
    detail: {
      th: 'โปรดกลับไปที่ร้านค้าแล้วลองอีกครั้ง',
      en: 'Please go back to the merchant and try again.',
    },
  },
  rateLimited: {
    heading: { th: 'มีการส่งคำขอมากเกินไป', en: 'Too many requests' },
    detail: {
      th: 'โปรดรอสักครู่แล้วลองใหม่ ไม่ต้องโอนเงินซ้ำ',
      en: 'Please wait a moment and try again. Do not pay twice.',
    },
  },
  unavailable: {
    heading: { th: 'ระบบไม่พร้อมให้บริการชั่วคราว', en: 'Temporarily unavailable' },
    detail: {
      th: 'โปรดลองใหม่อีกครั้งในอีกสักครู่ ไม่ต้องโอนเงินซ้ำ',
      en: 'Please try again in a moment. Do not pay twice.',
    },
  },
  failed: {
    heading: { th: 'เกิดข้อผิดพลาด', en: 'Something went wrong' },
    detail: {
      th: 'โปรดลองใหม่อีกครั้ง หากยังพบปัญหา โปรดแจ้งรหัสอ้างอิงด้านล่างกับร้านค้า',
      en: 'Please try again. If it persists, give the merchant the reference below.',
    },
  },
} satisfies Record<string, ErrorPageText>

/** The error page for an HTTP status. */
export function errorPageMessage(status: number): ErrorPageText {
  if (status === 404) return ERROR_PAGE_MESSAGES.notFound
  if (status === 429) return ERROR_PAGE_MESSAGES.rateLimited
  if (status === 503) return ERROR_PAGE_MESSAGES.unavailable
  if (status >= 500) return ERROR_PAGE_MESSAGES.failed
  return ERROR_PAGE_MESSAGES.refused
}
