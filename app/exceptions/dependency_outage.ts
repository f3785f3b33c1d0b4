/**
 * Errors that mean MySQL/MariaDB or Redis is briefly unreachable, not that
 * the request or the code is wrong: the caller should retry with backoff
 * (503 service-unavailable), and operators need the cause, not a stack.
 */

/** Socket and driver codes of a connection that failed, dropped or timed out (Node, mysql2). */
const CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_CON_COUNT_ERROR',
  'ER_TOO_MANY_USER_CONNECTIONS',
  'ER_SERVER_SHUTDOWN',
])

/**
 * MySQL error numbers: too many connections (1040), server shutting down
 * (1053), user connection limit (1203), and the client-side "can't connect"
 * (2002, 2003) and "server gone / lost" (2006, 2013); and a Galera node
 * that is not in the Primary component or is leaving it, which refuses
 * every statement, reads included (1047 "WSREP has not yet prepared node
 * for application use"): HAProxy takes it out within seconds.
 */
const ERRNOS = new Set([1040, 1047, 1053, 1203, 2002, 2003, 2006, 2013])

/** knex's pool acquire timeout, ioredis's exhausted retries and cluster failure. */
const NAMES = new Set(['KnexTimeoutError', 'MaxRetriesPerRequestError', 'ClusterAllFailedError'])

/**
 * Messages without a code: ioredis on a closed or offline connection or a
 * command timeout, mysql2 on a closed connection, and Redis replies of a
 * server that is loading, busy or without its master.
 */
const MESSAGES = [
  /^Connection is closed\.?$/,
  /^Stream isn't writeable/,
  /^Command timed out$/,
  /^Can't add new command when connection is in closed state$/,
  /^Connection lost/,
  // knex: a BEGIN, SAVEPOINT, COMMIT or ROLLBACK failed (the connection
  // dropped), so the transaction is over and its next query is refused with
  // this instead of the connection error. Seen with MariaDB killed under load.
  /^Transaction query already complete/,
  /^(LOADING|BUSY|MASTERDOWN|CLUSTERDOWN|TRYAGAIN) /,
]

interface Candidate {
  code?: unknown
  errno?: unknown
  name?: unknown
  message?: unknown
  cause?: unknown
  errors?: unknown
}

/**
 * The cause to log (a code or error name) when `error`, or an error it wraps,
 * is a dependency outage; undefined otherwise.
 */
export function dependencyOutage(error: unknown, depth = 0): string | undefined {
  if (!error || typeof error !== 'object' || depth > 3) return undefined
  const { code, errno, name, message, cause, errors } = error as Candidate
  if (typeof code === 'string' && CODES.has(code)) return code
  if (typeof errno === 'number' && ERRNOS.has(errno))
    return typeof code === 'string' ? code : `errno ${errno}`
  if (typeof name === 'string' && NAMES.has(name)) return name
  if (typeof message === 'string' && MESSAGES.some((pattern) => pattern.test(message))) {
    return typeof code === 'string' ? code : message.split(/[.\n]/)[0]
  }
  // Node reports a refused dual-stack connect as an AggregateError; knex and others set `cause`.
  const nested = Array.isArray(errors) ? [cause, ...errors] : [cause]
  for (const inner of nested) {
    const found = dependencyOutage(inner, depth + 1)
    if (found) return found
  }
  return undefined
}

/**
 * A request body stream that ended early (the client closed the connection,
 * or its framing broke mid-body): nobody is left to answer.
 */
export function clientAborted(error: unknown) {
  const candidate = error as Candidate | undefined
  return candidate?.code === 'ECONNRESET' && candidate.message === 'aborted'
}
