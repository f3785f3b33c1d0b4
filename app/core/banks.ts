/**
 * Bank codes the merchant API accepts (spec: Bank codes), with the 3-digit
 * interbank codes used by slips and statements. SCIB (Siam City Bank, 015) is
 * defunct but stays accepted because the spec lists it.
 */
export const BANKS = {
  BAAC: '034',
  BAY: '025',
  BBL: '002',
  CIMB: '022',
  CITI: '017',
  GHB: '033',
  GSB: '030',
  KBANK: '004',
  KK: '069',
  KTB: '006',
  LH: '073',
  SC: '020',
  SCB: '014',
  SCIB: '015',
  TISCO: '067',
  TTB: '011',
  UOB: '024',
} as const

export type BankCode = keyof typeof BANKS

export function isBankCode(value: unknown): value is BankCode {
  return typeof value === 'string' && Object.hasOwn(BANKS, value)
}

/**
 * What customers call each bank, in English and in Thai: the hosted payment
 * page shows these, since a customer looks for a name in their banking app,
 * not for the API's code.
 */
export const BANK_NAMES: Record<BankCode, { en: string; th: string }> = {
  BAAC: {
    en: 'Bank for Agriculture and Agricultural Cooperatives',
    th: 'ธนาคารเพื่อการเกษตรและสหกรณ์การเกษตร',
  },
  BAY: { en: 'Bank of Ayudhya (Krungsri)', th: 'ธนาคารกรุงศรีอยุธยา' },
  BBL: { en: 'Bangkok Bank', th: 'ธนาคารกรุงเทพ' },
  CIMB: { en: 'CIMB Thai Bank', th: 'ธนาคารซีไอเอ็มบี ไทย' },
  CITI: { en: 'Citibank', th: 'ธนาคารซิตี้แบงก์' },
  GHB: { en: 'Government Housing Bank', th: 'ธนาคารอาคารสงเคราะห์' },
  GSB: { en: 'Government Savings Bank', th: 'ธนาคารออมสิน' },
  KBANK: { en: 'Kasikornbank', th: 'ธนาคารกสิกรไทย' },
  KK: { en: 'Kiatnakin Phatra Bank', th: 'ธนาคารเกียรตินาคินภัทร' },
  KTB: { en: 'Krungthai Bank', th: 'ธนาคารกรุงไทย' },
  LH: { en: 'Land and Houses Bank', th: 'ธนาคารแลนด์ แอนด์ เฮ้าส์' },
  SC: { en: 'Standard Chartered Bank (Thai)', th: 'ธนาคารสแตนดาร์ดชาร์เตอร์ด (ไทย)' },
  SCB: { en: 'Siam Commercial Bank', th: 'ธนาคารไทยพาณิชย์' },
  SCIB: { en: 'Siam City Bank', th: 'ธนาคารนครหลวงไทย' },
  TISCO: { en: 'TISCO Bank', th: 'ธนาคารทิสโก้' },
  TTB: { en: 'TMBThanachart Bank (ttb)', th: 'ธนาคารทหารไทยธนชาต' },
  UOB: { en: 'United Overseas Bank (Thai)', th: 'ธนาคารยูโอบี' },
}

/** A bank's name in `lang`; an unknown code is shown as it is rather than hidden. */
export function bankName(code: string, lang: 'en' | 'th'): string {
  return isBankCode(code) ? BANK_NAMES[code][lang] : code
}
