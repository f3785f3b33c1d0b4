import { formatTokens } from '#reconciliation/layouts/definition'
import { escapeRegex } from '#reconciliation/layouts/cells'

/**
 * Dates and times in a cell of a layout operators define (defined_layout.ts):
 * the layout's format (definition.ts tokens), Thai and English month names,
 * Buddhist-era and two-digit years, Excel's dates, all as Bangkok time.
 */

/** Bangkok (GMT+7) ahead of UTC. */
export const GATEWAY_OFFSET_MS = 7 * 3_600_000

const THAI_MONTHS_SHORT = [
  'ม.ค.',
  'ก.พ.',
  'มี.ค.',
  'เม.ย.',
  'พ.ค.',
  'มิ.ย.',
  'ก.ค.',
  'ส.ค.',
  'ก.ย.',
  'ต.ค.',
  'พ.ย.',
  'ธ.ค.',
]
const THAI_MONTHS_LONG = [
  'มกราคม',
  'กุมภาพันธ์',
  'มีนาคม',
  'เมษายน',
  'พฤษภาคม',
  'มิถุนายน',
  'กรกฎาคม',
  'สิงหาคม',
  'กันยายน',
  'ตุลาคม',
  'พฤศจิกายน',
  'ธันวาคม',
]
const ENGLISH_MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
]

/** A month name → 1..12: Thai (abbreviated with or without its dots, or in full) or English. */
function monthByName(text: string, thai: boolean): number | null {
  if (thai) {
    const bare = text.replace(/[.\s]/g, '')
    const short = THAI_MONTHS_SHORT.findIndex((name) => name.replaceAll('.', '') === bare)
    if (short !== -1) return short + 1
    const long = THAI_MONTHS_LONG.indexOf(bare)
    return long === -1 ? null : long + 1
  }
  const lower = text.toLowerCase().replace(/\.$/, '')
  const index = ENGLISH_MONTHS.findIndex(
    (name) => name === lower || (lower.length >= 3 && name.startsWith(lower) && lower.length <= 4)
  )
  return index === -1 ? null : index + 1
}

export interface Parts {
  year?: number
  /** The year as written had two digits. */
  shortYear?: boolean
  month?: number
  day?: number
  hour?: number
  minute?: number
  second?: number
}

const compiled = new Map<string, { pattern: RegExp; fields: string[] }>()

/** A date or time format (definition.ts tokens) as an anchored regular expression. */
function formatPattern(format: string) {
  let found = compiled.get(format)
  if (found) return found
  const fields: string[] = []
  let source = ''
  for (const part of formatTokens(format)) {
    if ('literal' in part) {
      source += /\s/.test(part.literal) ? '\\s+' : escapeRegex(part.literal)
      continue
    }
    fields.push(part.token)
    switch (part.token) {
      case 'TMMM':
      case 'TMMMM':
        source += '([\\u0E00-\\u0E7F.]+)'
        break
      case 'MMM':
      case 'MMMM':
        source += '([A-Za-z]+\\.?)'
        break
      case 'YYYY':
        source += '(\\d{4})'
        break
      case 'YY':
        source += '(\\d{2})'
        break
      default:
        source += '(\\d{1,2})'
    }
  }
  found = { pattern: new RegExp(`^${source}$`), fields }
  compiled.set(format, found)
  return found
}

/** The text read with the format: its parts, or null when it does not fit. */
export function readWithFormat(text: string, format: string): Parts | null {
  const { pattern, fields } = formatPattern(format)
  const match = pattern.exec(text.trim().replace(/\s+/g, ' '))
  if (!match) return null
  const parts: Parts = {}
  for (const [index, token] of fields.entries()) {
    const value = match[index + 1]
    switch (token) {
      case 'D':
      case 'DD':
        parts.day = Number(value)
        break
      case 'M':
      case 'MM':
        parts.month = Number(value)
        break
      case 'MMM':
      case 'MMMM':
      case 'TMMM':
      case 'TMMMM': {
        const month = monthByName(value, token.startsWith('T'))
        if (month === null) return null
        parts.month = month
        break
      }
      case 'YY':
        parts.year = Number(value)
        parts.shortYear = true
        break
      case 'YYYY':
        parts.year = Number(value)
        break
      case 'H':
      case 'HH':
        parts.hour = Number(value)
        break
      case 'mm':
        parts.minute = Number(value)
        break
      case 'ss':
        parts.second = Number(value)
    }
  }
  return parts
}

/**
 * The Gregorian year of a year as written: two digits are 20yy (CE) or
 * 25yy (BE: 69 is 2569); a Buddhist-era year is CE + 543. A year before
 * 1990 or after next year is refused, saying which era it looks like.
 */
export function gregorianYear(
  written: number,
  shortYear: boolean,
  era: 'ce' | 'be',
  latest = new Date().getUTCFullYear() + 1
) {
  const asCe = shortYear ? 2000 + written : written
  const asBe = (shortYear ? 2500 + written : written) - 543
  const year = era === 'be' ? asBe : asCe
  const plausible = (candidate: number) => candidate >= 1990 && candidate <= latest
  if (plausible(year)) return { year }
  const shown = shortYear ? String(written).padStart(2, '0') : String(written)
  if (era === 'ce' && plausible(asBe)) {
    return {
      error: `the year ${shown} is a Buddhist-era year (${asBe + 543} BE = ${asBe} CE): set the layout's era to BE`,
    }
  }
  if (era === 'be' && plausible(asCe)) {
    return { error: `the year ${shown} is a Gregorian year (${asCe}): set the layout's era to CE` }
  }
  return { error: `the year ${shown} (${year} CE) is not a statement's year` }
}

/** Wall-clock time in Bangkok (GMT+7) → the instant; null for an impossible date or time. */
export function bangkokInstant(
  year: number,
  month: number,
  day: number,
  hour = 0,
  minute = 0,
  second = 0
): Date | null {
  const wall = Date.UTC(year, month - 1, day, hour, minute, second)
  const check = new Date(wall)
  if (
    check.getUTCFullYear() !== year ||
    check.getUTCMonth() !== month - 1 ||
    check.getUTCDate() !== day ||
    check.getUTCHours() !== hour ||
    check.getUTCMinutes() !== minute ||
    check.getUTCSeconds() !== second
  ) {
    return null
  }
  return new Date(wall - GATEWAY_OFFSET_MS)
}

/** Excel's day 0 (serial dates count days from it). */
const EXCEL_EPOCH = Date.UTC(1899, 11, 30)

/** A date Excel holds (exceljs: its wall clock as UTC), or a serial number of days. */
export function wallClockOf(cell: Date | number) {
  const ms = cell instanceof Date ? cell.getTime() : EXCEL_EPOCH + Math.round(cell * 86_400) * 1000
  const at = new Date(Math.round(ms / 1000) * 1000)
  return {
    year: at.getUTCFullYear(),
    month: at.getUTCMonth() + 1,
    day: at.getUTCDate(),
    hour: at.getUTCHours(),
    minute: at.getUTCMinutes(),
    second: at.getUTCSeconds(),
  }
}
