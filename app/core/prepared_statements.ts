import { isWrittenAsList, placeholderCount, statementText, valueText } from '#core/sql_text'

/** A statement and its values (sql_batch.ts's Statement). */
interface Statement {
  sql: string
  bindings: readonly unknown[]
}

/** mysql2's callback connection, as the batch pool hands it out. */
interface Connection {
  query(options: { sql: string }, callback: (error: Error | null, results: unknown) => void): void
}

/**
 * The statements of a batch as EXECUTEs of statements their connection has
 * prepared (SQL PREPARE, once per connection and text), in one text. MariaDB
 * parses and resolves a statement text on every execution; a prepared one
 * only once per connection, and a payment create's batch then costs it a
 * tenth to a quarter less CPU (`npm run bench:statements`,
 * docs/performance.md). The
 * EXECUTEs still travel together, with their COMMIT, in one round trip.
 *
 * A text is prepared in a round trip of its own before the batch that first
 * uses it on a connection (so a batch's answers are its statements' only).
 * A statement without values, with a value mysql2 writes as a list (an
 * array, an object), a text MariaDB will not prepare, or past
 * PER_CONNECTION texts on its connection is sent as text, as before; so is
 * one whose PREPARE failed for another reason, until a later batch
 * prepares it.
 */
export async function executeText(
  connection: Connection,
  statements: readonly Statement[],
  timezone: string
) {
  let handles = handlesOf.get(connection)
  if (!handles) {
    handles = new Map()
    handlesOf.set(connection, handles)
  }
  for (const { sql, bindings } of statements) {
    if (handles.has(sql) || !preparable(sql, bindings)) continue
    if (handles.size >= PER_CONNECTION) break
    await prepare(connection, handles, sql, bindings.length)
  }
  let text = ''
  for (const [i, statement] of statements.entries()) {
    if (i > 0) text += ';\n'
    const handle = preparable(statement.sql, statement.bindings)
      ? handles.get(statement.sql)
      : undefined
    text += handle
      ? execute(handle, statement.bindings, timezone)
      : statementText(statement, timezone)
  }
  return text
}

/** Texts prepared on each connection of the batch pool, by text: their handles. */
const handlesOf = new WeakMap<Connection, Map<string, string>>()
/**
 * At most this many texts per connection: a create uses about ten, every
 * hot path together a few dozen. The server's own limit is global
 * (max_prepared_stmt_count, 16,382 by default).
 */
const PER_CONNECTION = 64
/** Texts MariaDB refused to prepare: sent as text from then on. */
const refused = new Set<string>()
const MAX_REFUSED = 1000

function preparable(sql: string, bindings: readonly unknown[]) {
  return bindings.length > 0 && !refused.has(sql) && !bindings.some(isWrittenAsList)
}

function execute(handle: string, bindings: readonly unknown[], timezone: string) {
  let text = `EXECUTE ${handle} USING `
  for (const [i, value] of bindings.entries()) {
    if (i > 0) text += ', '
    text += valueText(value, timezone)
  }
  return text
}

async function prepare(
  connection: Connection,
  handles: Map<string, string>,
  sql: string,
  values: number
) {
  // EXECUTE wants exactly one value per placeholder, where mysql2 ignores
  // values beyond them: such a text stays text.
  if (placeholderCount(sql, values) !== values) {
    refuse(sql)
    return
  }
  const handle = `gw_batch_${handles.size}`
  try {
    await query(connection, `PREPARE ${handle} FROM ${valueText(sql, 'Z')}`)
    handles.set(sql, handle)
  } catch (error) {
    // A text MariaDB cannot prepare stays text. Any other failure (a lost
    // connection, a cluster node not ready, the server's limit on prepared
    // statements) sends this batch's statement as text, and the next batch
    // tries again: the batch itself fails as it would have, or runs.
    const { errno } = error as { errno?: number }
    if (errno !== undefined && NOT_PREPARABLE.has(errno)) refuse(sql)
  }
}

function refuse(sql: string) {
  if (refused.size < MAX_REFUSED) refused.add(sql)
}

/** ER_PARSE_ERROR, ER_UNSUPPORTED_PS: the text, not the moment, is the cause. */
const NOT_PREPARABLE = new Set([1064, 1295])

function query(connection: Connection, sql: string) {
  return new Promise<unknown>((resolve, reject) =>
    connection.query({ sql }, (error, results) => (error ? reject(error) : resolve(results)))
  )
}
