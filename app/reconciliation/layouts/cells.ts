import type { Cell } from '#reconciliation/layouts/decode'
import { DECIMALS, THOUSANDS, type LayoutDefinition } from '#reconciliation/layouts/definition'

/**
 * One cell of a layout operators define (defined_layout.ts) as text, as an
 * amount in the layout's conventions, or as a count the file declares. A
 * cell that is not what the layout says comes back with the reason, which
 * the refusal names (lines.ts).
 */

/** The text as a regular expression that matches it exactly. */
export function escapeRegex(text: string) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/** A cell as text: numbers as written, Excel dates as `YYYY-MM-DD HH:mm:ss` (wall clock). */
export function cellText(cell: Cell | undefined): string {
  if (cell === null || cell === undefined) return ''
  if (cell instanceof Date) return cell.toISOString().slice(0, 19).replace('T', ' ')
  return String(cell).trim()
}

const CURRENCY = /THB|฿|บาท/gi

/**
 * An amount as the layout writes it → signed satang, or the reason it is
 * not one. Numbers from XLSX cells must have at most 2 decimals; text uses
 * the layout's thousands separator and decimal mark, a leading minus (and,
 * when the layout says so, parentheses or a trailing minus) for negative;
 * `THB`, `฿` and `บาท` are dropped.
 */
export function readAmount(
  cell: Cell | undefined,
  definition: Pick<
    LayoutDefinition,
    'thousands' | 'decimal' | 'parentheses_negative' | 'trailing_minus'
  >
): { satang: number } | { error: string } | null {
  if (cell === null || cell === undefined) return null
  if (cell instanceof Date) return { error: 'is a date, not an amount' }
  if (typeof cell === 'number') {
    const satang = Math.round(cell * 100)
    if (
      !Number.isFinite(cell) ||
      Math.abs(cell * 100 - satang) > 1e-6 ||
      Math.abs(satang) >= 1e15
    ) {
      return { error: 'is not an amount with at most 2 decimals' }
    }
    return { satang }
  }
  let text = cell
    .replace(CURRENCY, '')
    .replace(/[\u00a0\u202f]/g, ' ')
    .trim()
  if (text === '') return null
  let negative = false
  const signs: string[] = []
  if (definition.parentheses_negative && /^\(.*\)$/.test(text)) {
    text = text.slice(1, -1).trim()
    signs.push('parentheses')
  }
  if (/^[-−]/.test(text)) {
    text = text.slice(1).trim()
    signs.push('minus')
  } else if (text.startsWith('+')) {
    text = text.slice(1).trim()
  }
  if (definition.trailing_minus && /[-−]$/.test(text)) {
    text = text.slice(0, -1).trim()
    signs.push('trailing minus')
  }
  if (signs.length > 1) return { error: `is negative twice (${signs.join(' and ')})` }
  negative = signs.length === 1
  const thousands = THOUSANDS[definition.thousands]
  const decimal = DECIMALS[definition.decimal]
  const dec = `(?:${escapeRegex(decimal)}(\\d{1,2}))?`
  const grouped = thousands
    ? new RegExp(`^(\\d{1,3}(?:${escapeRegex(thousands)}\\d{3})+)${dec}$`)
    : null
  const plain = new RegExp(`^(\\d{1,13})${dec}$`)
  const match = (grouped && grouped.exec(text)) ?? plain.exec(text)
  if (!match) {
    const convention = `thousands ${thousands ? `"${thousands}"` : 'none'}, decimal "${decimal}"`
    return {
      error: `is not an amount (${convention}${definition.parentheses_negative ? ', (negative)' : ''}${definition.trailing_minus ? ', trailing minus' : ''})`,
    }
  }
  const whole = thousands ? match[1].replaceAll(thousands, '') : match[1]
  if (whole.length > 13) return { error: 'is too large an amount' }
  const satang = Number(whole) * 100 + Number((match[2] ?? '').padEnd(2, '0'))
  return { satang: negative ? -satang : satang }
}

/** A count the file declares ("3", "1,204", or a number cell). */
export function readCount(cell: Cell | undefined): number | null {
  if (typeof cell === 'number') return Number.isInteger(cell) && cell >= 0 ? cell : null
  const text = cellText(cell)
  return /^\d{1,3}(?:,?\d{3})*$/.test(text) ? Number(text.replaceAll(',', '')) : null
}
