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
  },
} as const

export type PageLanguage = keyof typeof PAGE_TEXT

export function pageLanguage(query: unknown, acceptLanguage: string | undefined): PageLanguage {
  if (query === 'en' || query === 'th') return query
  return acceptLanguage && /^en\b/i.test(acceptLanguage.trim()) ? 'en' : 'th'
}
