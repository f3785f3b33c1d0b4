import { createRequire } from 'node:module'

/**
 * knex resolves `commit()` even when the server refuses the COMMIT (it only
 * rejects the transaction's own promise, which Lucid never reads: knex issue
 * #3370), so Lucid's db.transaction() returns as if committed and runs its
 * after-commit hooks. On Galera a certification conflict is refused exactly
 * there, at COMMIT: the write would be lost without an error. This provider
 * makes a refused COMMIT throw, with the server's errno, so that
 * withDeadlockRetry() (app/core/db_retry.ts) sees it.
 *
 * Installed in register(), the first step of every boot (web, worker, Ace
 * commands that start the app, tests, REPL): Lucid opens its connections on
 * first use, so no transaction can run before it. It patches knex's
 * Transaction class, once per process, for every connection.
 */
interface KnexTransaction {
  prototype: {
    commit(this: KnexTransactionInstance, conn: unknown, value: unknown): Promise<unknown>
  }
}
interface KnexTransactionInstance {
  transactor?: { executionPromise?: Promise<unknown> }
}

export function surfaceCommitFailures() {
  const KnexTransactionClass = createRequire(import.meta.url)(
    'knex/lib/execution/transaction.js'
  ) as KnexTransaction & { surfacesCommitFailures?: boolean }
  if (KnexTransactionClass.surfacesCommitFailures) return
  const commit = KnexTransactionClass.prototype.commit
  KnexTransactionClass.prototype.commit = async function (conn, value) {
    const result = await commit.call(this, conn, value)
    const outcome = this.transactor?.executionPromise
    // Settled by now: rejected (with the COMMIT's error) when the COMMIT failed.
    if (outcome) await Promise.race([outcome, undefined])
    return result
  }
  KnexTransactionClass.surfacesCommitFailures = true
}

export default class KnexCommitProvider {
  register() {
    surfaceCommitFailures()
  }
}
