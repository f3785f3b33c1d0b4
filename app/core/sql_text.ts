import mysql, { type SqlValue } from 'mysql2'

/** A statement of a batch and its values, one per `?` placeholder. */
export interface Statement {
  sql: string
  bindings: readonly unknown[]
}

/**
 * One statement's text with its values in it, as mysql2 would write it
 * client-side, without reading the text for placeholders on every call:
 * mysql2's format reads each batch character by character for `?` outside
 * quotes and comments (a twentieth of a payment create's CPU,
 * docs/performance.md). A statement's text is cut at its placeholders once,
 * by mysql2's own format (each value a marker), and the cut is kept.
 *
 * Values are escaped as mysql2's format escapes them: numbers as written,
 * everything else by its escape() in the connection's time zone. A
 * statement with a value that format would expand (a plain object or Map)
 * or a text that format does not cut as expected is formatted by mysql2.
 */
export function statementText({ sql, bindings }: Statement, timezone: string) {
  if (bindings.length === 0) return sql
  const { parts } = cut(sql, bindings.length)
  if (parts === null || bindings.some(isExpanded)) {
    return mysql.format(sql, bindings as SqlValue[], false, timezone)
  }
  let text = parts[0]
  for (const [i, value] of bindings.entries()) text += valueText(value, timezone) + parts[i + 1]
  return text
}

/**
 * Whether `sql` has exactly `count` placeholders (mysql2 ignores values
 * beyond its placeholders; SQL's EXECUTE refuses them).
 */
export function hasPlaceholders(sql: string, count: number) {
  return cut(sql, count).exact
}

/** One value as mysql2's format writes it in place of a `?`. */
export function valueText(value: unknown, timezone: string) {
  return typeof value === 'number' || typeof value === 'bigint'
    ? `${value}`
    : mysql.escape(value as SqlValue, true, timezone)
}

/** A value mysql2 writes as a list of values (`?` in `IN (?)`) or of assignments. */
export function isWrittenAsList(value: unknown) {
  return Array.isArray(value) || value instanceof Set || isExpanded(value)
}

/** Values mysql2's format writes as lists of assignments or values: left to it. */
function isExpanded(value: unknown) {
  if (typeof value !== 'object' || value === null) return false
  if (value instanceof Map) return true
  const prototype = Object.getPrototypeOf(value)
  return (prototype === Object.prototype || prototype === null) && !('toSqlString' in value)
}

/**
 * A text cut at its first `count` placeholders: count + 1 pieces, or null
 * when mysql2's format does not find `count` plain `?` placeholders in it;
 * `exact` when it has no more than those.
 */
interface Cut {
  count: number
  parts: readonly string[] | null
  exact: boolean
}

/** Cut texts, by text; bounded, since texts are the code's own. */
const cuts = new Map<string, Cut>()
const MAX_CUTS = 2000

function cut(sql: string, count: number): Cut {
  const known = cuts.get(sql)
  if (known?.count === count) return known
  const fresh = cutOnce(sql, count)
  if (!known && cuts.size < MAX_CUTS) cuts.set(sql, fresh)
  return fresh
}

const MARK = '\u0000'

function cutOnce(sql: string, count: number): Cut {
  const refused = { count, parts: null, exact: false }
  if (sql.includes(MARK)) return refused
  // One marker more than the values: a text with more placeholders writes it.
  const markers = Array.from({ length: count + 1 }, (_, i) => ({
    toSqlString: () => `${MARK}${i}${MARK}`,
  }))
  let pieces: string[]
  try {
    pieces = mysql.format(sql, markers, false, 'Z').split(MARK)
  } catch {
    return refused
  }
  // text, 0, text, 1, … text: a `??` placeholder (an identifier) does not write its marker.
  const exact = pieces.length === 2 * count + 1
  if (!exact && pieces.length !== 2 * count + 3) return refused
  const parts: string[] = []
  for (let i = 0; i <= 2 * count; i++) {
    if (i % 2 === 0) parts.push(pieces[i])
    else if (pieces[i] !== String((i - 1) / 2)) return refused
  }
  // The last value's piece runs to the end of the text, its further `?` as written.
  if (!exact) parts[count] += `?${pieces.slice(2 * count + 2).join('')}`
  return { count, parts, exact }
}
