import db from '@adonisjs/lucid/services/db'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import { withDeadlockRetry, type DeadlockRetryOptions } from '#core/db_retry'

/**
 * One database transaction, run again whole when the server rolled it back
 * for a reason a second try clears (a deadlock victim, a Galera certification
 * conflict: app/core/db_retry.ts). The body is the whole unit: its reads are
 * made again on a retry, so nothing it decided on can be stale.
 */
export function inTransaction<T>(
  body: (trx: TransactionClientContract) => Promise<T>,
  options: DeadlockRetryOptions & {
    /** The server's default (repeatable read) unless said. */
    isolationLevel?: 'read committed' | 'repeatable read' | 'serializable'
  } = {}
): Promise<T> {
  const { isolationLevel, ...retry } = options
  return withDeadlockRetry(
    () => (isolationLevel ? db.transaction(body, { isolationLevel }) : db.transaction(body)),
    retry
  )
}
