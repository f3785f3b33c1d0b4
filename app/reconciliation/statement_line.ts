import { BANKS, isBankCode } from '#core/banks'
/** A statement line as a layout parser reads it, before import. */
export interface ParsedStatementLine {
  /** The file's physical line (1 = the header row, so 2 = the first data line), for error messages. */
  lineNumber: number
  lineAt: Date
  direction: 'credit' | 'debit'
  /** satang, always positive; the direction says which way the money went */
  amount: number
  reference: string | null
  /**
   * The bank's own reference of the transaction (what a slip's mini-QR
   * names), when the statement carries one; stored as the line's trans_ref,
   * or its reference when it has none.
   */
  transRef?: string | null
  /** The account's balance the bank printed after this line, satang (signed), when the statement has one. */
  balanceAfter?: number | null
  description: string
}

export class StatementFormatError extends Error {}

const ORDER_ID = /\b([A-Z0-9]{3}[PWM]\d{8}[A-Z0-9]{12})\b/
const REF1 = /\bref(?:1|erence)?\s*[:=#]?\s*([A-Z0-9]{4,20})\b/i

/**
 * A reference the gateway can match on, found in free text: a
 * platform_order_id, or a bill-payment ref1 ("Ref1: 20261121ABCDEF...").
 */
export function findReference(text: string): string | null {
  const orderId = ORDER_ID.exec(text)
  if (orderId) return orderId[1]
  const ref = REF1.exec(text)
  return ref ? ref[1].toUpperCase() : null
}

/** "1,234.50" / "1234.5" / "-20.00" → satang (sign dropped; callers use direction). */
export function parseStatementAmount(text: string, lineNumber: number, column?: string): number {
  const clean = text.replaceAll(',', '').trim().replace(/^-/, '')
  const match = /^(\d{1,13})(?:\.(\d{1,2}))?$/.exec(clean)
  if (!match) {
    const where = column ? `line ${lineNumber}, column ${column}` : `line ${lineNumber}`
    throw new StatementFormatError(`${where}: "${text}" is not an amount`)
  }
  return Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'))
}

/** A running balance the bank printed ("12,345.60", "-20.00") → signed satang; empty → null. */
export function parseStatementBalance(
  text: string | undefined,
  lineNumber: number,
  column?: string
): number | null {
  const clean = text?.trim() ?? ''
  if (clean === '') return null
  const satang = parseStatementAmount(clean, lineNumber, column)
  return clean.startsWith('-') ? -satang : satang
}

/**
 * The 3-digit interbank code of the bank a credit came from, as a
 * statement's description names it ("TRANSFER FROM SCB X7890 …"), or null.
 * What a slip's mini-QR calls its sending bank.
 */
export function senderBankOf(description: string): string | null {
  const code = /\bFROM\s+([A-Z]{2,5})\b/i.exec(description)?.[1]?.toUpperCase()
  return code && isBankCode(code) ? BANKS[code] : null
}
