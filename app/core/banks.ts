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
