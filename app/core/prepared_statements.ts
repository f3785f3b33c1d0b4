import {
  hasPlaceholders,
  isWrittenAsList,
  statementText,
  valueText,
  type Statement,
} from '#core/sql_text'

/** mysql2's callback connection, as the batch pool hands it out. */
export interface RawConnection {
  query(options: { sql: string }, callback: (error: Error | null, results: any) => void): void
  __knex__disposed?: unknown
}

/** Sends `sql`, its values already in it, on the connection: mysql2's answer. */
export function send(connection: RawConnection, sql: string) {
  return new Promise<any>((resolve, reject) =>
    connection.query({ sql }, (error, results) => (error ? reject(error) : resolve(results)))
  )
}

/**
 * The statements of a batch as EXECUTEs of statements their connection has
 * prepared (SQL PREPARE, once per connection and text), in one text. MariaDB
 * parses and resolves a statement text on every execution; a prepared one
 * only once per connection, and a payment create's batch then costs it a
 * tenth to a quarter less CPU (`npm run bench:statements`,
 * docs/performance.md). The EXECUTEs still travel together, with their
 * COMMIT, in one round trip.
 *
 * A text is prepared in a round trip of its own before the batch that first
 * uses it on a connection (so a batch's answers are its statements' only).
 * A statement without values, with a value mysql2 writes as a list (an
 * array, an object), with more values than placeholders, a text MariaDB
 * will not prepare, or past PER_CONNECTION texts on its connection is sent
 * as text (sql_text.ts), as before; so is one whose PREPARE failed for
 * another reason, until a later batch prepares it.
 */
export async function executeText(
  connection: RawConnection,
  statements: readonly Statement[],
  timezone: string
) {
  let handles = handlesOf.get(connection)
  if (!handles) {
    handles = new Map()
    handlesOf.set(connection, handles)
  }
  let text = ''
  for (const [i, statement] of statements.entries()) {
    if (i > 0) text += ';\n'
    // A text already prepared on the connection costs no await (nearly every one).
    const handle = isPreparable(statement)
      ? (handles.get(statement.sql) ?? (await prepare(connection, handles, statement)))
      : undefined
    text += handle
      ? execute(handle, statement.bindings, timezone)
      : statementText(statement, timezone)
  }
  return text
}

/** Texts prepared on each connection of the batch pool, by text: their handles. */
const handlesOf = new WeakMap<RawConnection, Map<string, string>>()
/**
 * At most this many texts per connection: a create uses about ten, every
 * hot path together a few dozen. The server's own limit is global
 * (max_prepared_stmt_count, 16,382 by default).
 */
const PER_CONNECTION = 64
/** Texts that are never prepared: sent as text. */
const refused = new Set<string>()
const MAX_REFUSED = 1000

/** Values EXECUTE can take, one per placeholder: none written as a list, at least one. */
function isPreparable({ bindings }: Statement) {
  return bindings.length > 0 && !bindings.some(isWrittenAsList)
}

/** The handle of a text not prepared on the connection yet, prepared now; undefined: as text. */
async function prepare(
  connection: RawConnection,
  handles: Map<string, string>,
  { sql, bindings }: Statement
) {
  if (refused.has(sql) || handles.size >= PER_CONNECTION) return undefined
  // EXECUTE wants exactly one value per placeholder, where mysql2 ignores
  // values beyond them: such a text stays text.
  if (!hasPlaceholders(sql, bindings.length)) {
    refuse(sql)
    return undefined
  }
  const handle = `gw_batch_${handles.size}`
  try {
    await send(connection, `PREPARE ${handle} FROM ${valueText(sql, 'Z')}`)
    handles.set(sql, handle)
    return handle
  } catch (error) {
    // A text MariaDB cannot prepare stays text. Any other failure (a lost
    // connection, a cluster node not ready, the server's limit on prepared
    // statements) sends this batch's statement as text, and the next batch
    // tries again: the batch itself fails as it would have, or runs.
    const { errno } = error as { errno?: number }
    if (errno !== undefined && NOT_PREPARABLE.has(errno)) refuse(sql)
    return undefined
  }
}

/** ER_PARSE_ERROR, ER_UNSUPPORTED_PS: the text, not the moment, is the cause. */
const NOT_PREPARABLE = new Set([1064, 1295])

function refuse(sql: string) {
  if (refused.size < MAX_REFUSED) refused.add(sql)
}

function execute(handle: string, bindings: readonly unknown[], timezone: string) {
  let text = `EXECUTE ${handle} USING `
  for (const [i, value] of bindings.entries()) {
    if (i > 0) text += ', '
    text += valueText(value, timezone)
  }
  return text
}
