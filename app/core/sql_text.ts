import mysql, { type SqlValue } from 'mysql2'

/** A statement and its values (sql_batch.ts's Statement). */
interface Statement {
  sql: string
  bindings: readonly unknown[]
}

/**
 * The text of a statement batch with its values in it, as mysql2 would
 * write it client-side, without scanning the text for placeholders on
 * every call: mysql2's format reads each batch character by character for
 * `?` outside quotes and comments (a twentieth of a payment create's CPU,
 * docs/performance.md). A statement's text is cut at its placeholders once,
 * by mysql2's own format (each value a marker), and the cut is kept.
 *
 * Values are escaped as mysql2's format escapes them: numbers as written,
 * everything else by its escape() in the connection's time zone. A
 * statement with a value that format would expand (a plain object or Map)
 * or a text that format does not cut as expected is formatted by mysql2.
 */
export function batchText(statements: readonly Statement[], timezone: string) {
  let text = ''
  for (const [i, statement] of statements.entries()) {
    if (i > 0) text += ';\n'
    text += statementText(statement, timezone)
  }
  return text
}

/** One statement's text with its values in it. */
export function statementText({ sql, bindings }: Statement, timezone: string) {
  if (bindings.length === 0) return sql
  const parts = cut(sql, bindings.length)
  if (parts === null || bindings.some(isExpanded)) {
    return mysql.format(sql, bindings as SqlValue[], false, timezone)
  }
  let text = parts[0]
  for (const [i, value] of bindings.entries()) text += valueText(value, timezone) + parts[i + 1]
  return text
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

/** Cut texts, by text; bounded, since texts are the code's own. */
const cuts = new Map<string, { count: number; parts: readonly string[] | null }>()
const MAX_CUTS = 2000

/**
 * `sql` cut at its first `count` placeholders: count + 1 pieces, or null
 * when mysql2's format does not find `count` plain `?` placeholders in it.
 */
function cut(sql: string, count: number) {
  const known = cuts.get(sql)
  if (known?.count === count) return known.parts
  const parts = cutOnce(sql, count)
  if (!known && cuts.size < MAX_CUTS) cuts.set(sql, { count, parts })
  return parts
}

const MARK = '\u0000'

/**
 * How many `?` placeholders mysql2's format finds in `sql` (outside quotes
 * and comments), counting no further than `atMost` + 1.
 */
export function placeholderCount(sql: string, atMost: number) {
  if (sql.includes(MARK)) return -1
  const markers = Array.from({ length: atMost + 1 }, () => ({ toSqlString: () => MARK }))
  try {
    return mysql.format(sql, markers, false, 'Z').split(MARK).length - 1
  } catch {
    return -1
  }
}

function cutOnce(sql: string, count: number): string[] | null {
  if (sql.includes(MARK)) return null
  const markers = Array.from({ length: count }, (_, i) => ({
    toSqlString: () => `${MARK}${i}${MARK}`,
  }))
  let pieces: string[]
  try {
    pieces = mysql.format(sql, markers, false, 'Z').split(MARK)
  } catch {
    return null
  }
  // text, 0, text, 1, … text: a `??` placeholder (an identifier) does not write its marker.
  if (pieces.length !== 2 * count + 1) return null
  const parts: string[] = []
  for (const [i, piece] of pieces.entries()) {
    if (i % 2 === 0) parts.push(piece)
    else if (piece !== String((i - 1) / 2)) return null
  }
  return parts
}
