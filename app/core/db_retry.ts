/**
 * Re-runs a whole transaction (the callback that opens it, reads included)
 * when the server rolled it back for a reason a second try can clear:
 *
 * - 1213 ER_LOCK_DEADLOCK: an InnoDB deadlock victim, and on Galera also a
 *   certification conflict with a write set of another node, reported on any
 *   statement or on the COMMIT itself ("Deadlock found…" or "WSREP detected
 *   deadlock/conflict…"; a refused COMMIT throws through
 *   providers/knex_commit_provider.ts). The transaction is rolled back whole.
 * - 1205 ER_LOCK_WAIT_TIMEOUT: only the statement is undone, but the callback
 *   throws, so the transaction is rolled back whole before the retry.
 * - 1047 ER_UNKNOWN_COM_ERROR "WSREP has not yet prepared node for
 *   application use": the node is not in the Primary component and refuses
 *   every statement, COMMIT included, so nothing was committed. The retry
 *   reaches the new writer once HAProxy has cut the pool's sessions to the
 *   node it marked down (`on-marked-down shutdown-sessions`).
 *
 * A lost connection (the writer died, HAProxy cut the session) is different:
 * when it happened during COMMIT the transaction may have committed. It is
 * retried only for a body declared `idempotent` (a re-run after a commit
 * changes nothing: unique keys or conditional updates make it a no-op or a
 * handled duplicate); otherwise it surfaces to the caller (a 503, a job retry
 * or a sweep that reads the database's final state).
 *
 * Attempts are bounded; the wait between them is jittered so that the two
 * sides of a conflict do not collide again in step.
 */
export interface DeadlockRetryOptions {
  /** Total tries, the first included (default 5). */
  attempts?: number
  /** The body is safe to re-run even after an unknown COMMIT outcome. */
  idempotent?: boolean
}

/**
 * How long an idempotent body keeps trying after its connection was lost.
 * A writer that dies mid-COMMIT leaves the outcome unknown; HAProxy moves
 * the writer within about two seconds, and the re-run on the new writer
 * either commits or finds its own first run (a merchant request's row), so
 * the caller learns what happened instead of answering "retry" (503) for
 * an order that exists.
 */
export const LOST_CONNECTION_BUDGET_MS = 6000

export interface DeadlockRetryEvent {
  /** The server's error number; 2013 (CR_SERVER_LOST) for a lost connection. */
  errno: number
  /** The attempt that failed (1 = the first run). */
  attempt: number
}

const RETRIED_ERRNOS = new Set([1213, 1205, 1047])

/** mysql2's codes for a connection that broke under a running query. */
const CONNECTION_LOST_CODES = new Set([
  'PROTOCOL_CONNECTION_LOST',
  'ECONNRESET',
  'EPIPE',
  'ER_SERVER_SHUTDOWN',
  'ER_CONNECTION_KILLED',
])
const CONNECTION_LOST = 2013

/** No connection could be made for the re-run yet (the writer is moving). */
const CONNECT_FAILED_CODES = new Set(['ECONNREFUSED', 'ETIMEDOUT', 'PROTOCOL_SEQUENCE_TIMEOUT'])

const listeners = new Set<(event: DeadlockRetryEvent) => void>()

/** Called on every retry (for metrics); returns the function that removes the listener. */
export function onDeadlockRetry(listener: (event: DeadlockRetryEvent) => void): () => void {
  listeners.add(listener)
  return () => void listeners.delete(listener)
}

/** The errno a retry is counted under, or null when the error must surface. */
function retriedErrno(error: unknown, idempotent: boolean): number | null {
  const { errno, code } = (error ?? {}) as { errno?: number; code?: string }
  if (errno !== undefined && RETRIED_ERRNOS.has(errno)) return errno
  if (idempotent && code !== undefined && CONNECTION_LOST_CODES.has(code)) return CONNECTION_LOST
  if (idempotent && onClosedConnection(error)) return CONNECTION_LOST
  return null
}

/**
 * mysql2's refusal of a command on a connection that had already broken
 * (the pool handed out one the writer's death closed while idle): the
 * command never reached a server, and the server rolled back whatever was
 * open on it. Seen in the cluster suite as the re-run after a writer was
 * killed mid-COMMIT, which must go on rather than answer 503 for a slip
 * that was stored.
 */
function onClosedConnection(error: unknown) {
  const { fatal, code, message } = (error ?? {}) as {
    fatal?: boolean
    code?: string
    message?: string
  }
  return fatal === true && code === undefined && /in closed state/.test(message ?? '')
}

/** After a lost connection: the re-run's own connect failed (knex's acquire timeout included). */
function connectFailed(error: unknown) {
  const { code, name } = (error ?? {}) as { code?: string; name?: string }
  return name === 'KnexTimeoutError' || (code !== undefined && CONNECT_FAILED_CODES.has(code))
}

export async function withDeadlockRetry<T>(
  operation: () => Promise<T>,
  options: number | DeadlockRetryOptions = {}
): Promise<T> {
  const { attempts = 5, idempotent = false } =
    typeof options === 'number' ? { attempts: options } : options
  // Set when an idempotent body lost its connection: from then on it is
  // re-run until it ends or the budget is spent, whatever the attempt count.
  let lostSince: number | undefined
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation()
    } catch (error) {
      let errno = retriedErrno(error, idempotent)
      if (errno === CONNECTION_LOST) lostSince ??= Date.now()
      if (errno === null && lostSince !== undefined && connectFailed(error)) errno = CONNECTION_LOST
      const withinBudget =
        lostSince !== undefined && Date.now() - lostSince < LOST_CONNECTION_BUDGET_MS
      if (errno === null || (attempt >= attempts && !withinBudget)) throw error
      for (const listener of listeners) {
        try {
          listener({ errno, attempt })
        } catch {
          // A metrics listener must never turn a retry into a failure.
        }
      }
      // 5 ms plus a jitter under a doubling ceiling: 20, 40, 80, 160 ms…, at
      // most 250 ms; after a lost connection a steady 250 ms while the writer moves.
      const ceiling = errno === CONNECTION_LOST ? 250 : Math.min(250, 20 * 2 ** (attempt - 1))
      await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * ceiling))
    }
  }
}

export function isDuplicateKey(error: unknown): boolean {
  return (error as { errno?: number }).errno === 1062
}
