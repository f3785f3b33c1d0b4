import db from '@adonisjs/lucid/services/db'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type { LucidModel, LucidRow } from '@adonisjs/lucid/types/model'
import { BATCH_CONNECTION } from '#config/database'

/**
 * Statement batches: several statements sent in one round trip, for payment
 * create, whose transaction takes row locks every create on a deposit
 * account needs (its limit counters). Such a lock is held until COMMIT; sent
 * one by one, every statement after it adds a round trip through a busy
 * event loop to the time everyone else waits, and that time, not the
 * database's work, capped creates at a few hundred per second. Sent with its
 * COMMIT in one batch, the lock lives only inside the server.
 *
 * Batches run on their own connection pool (BATCH_CONNECTION), the only one
 * that accepts several statements per query: the rest of the gateway keeps
 * mysql2's single-statement default. Every value is still a bound parameter.
 * Its sessions are READ COMMITTED (each statement sees the latest committed
 * rows, as the hot paths need) and strict (the refusal below needs it).
 */
export interface Statement {
  sql: string
  bindings: readonly unknown[]
}

export function statement(sql: string, bindings: readonly unknown[] = []): Statement {
  return { sql, bindings }
}

/** A transaction on the batch connection. */
export function batchTransaction<T>(callback: (trx: TransactionClientContract) => Promise<T>) {
  return db.connection(BATCH_CONNECTION).transaction(callback)
}

/**
 * Runs the statements in one round trip and returns each one's result (rows
 * for a SELECT, the OK packet with affectedRows/insertId otherwise). The
 * server stops at the first statement that fails: the ones before it stay
 * done in the transaction, the ones after it never run, and the error is
 * thrown (a batch ending in COMMIT then leaves the transaction open, and
 * Lucid rolls it back).
 */
export async function runBatch(
  trx: TransactionClientContract,
  statements: Statement[]
): Promise<any[]> {
  const sql = statements.map((each) => each.sql).join(';\n')
  const bindings = statements.flatMap((each) => each.bindings)
  const [results] = await trx.rawQuery(sql, bindings as any[])
  return statements.length === 1 ? [results] : results
}

/**
 * A conditional write that refuses instead of skipping: `value` when
 * `condition` holds, else NULL, which the NOT NULL column refuses in strict
 * mode (error 1048). Unlike a WHERE that matches no row, a refusal stops the
 * batch before its COMMIT, so a limit or balance check and the commit can
 * travel together; refusedColumn() tells which guard refused.
 */
export function refuseUnless(condition: string, value: string) {
  return `IF(${condition}, ${value}, NULL)`
}

/** The column whose refuseUnless() guard refused the statement, or null for any other error. */
export function refusedColumn(error: unknown): string | null {
  const { errno, sqlMessage } = error as { errno?: number; sqlMessage?: string }
  if (errno !== 1048) return null
  return /Column '([^']+)'/.exec(sqlMessage ?? '')?.[1] ?? null
}

/** The unique key a duplicate-key error (1062) names, or null for any other error. */
export function duplicateKeyName(error: unknown): string | null {
  const { errno, sqlMessage } = error as { errno?: number; sqlMessage?: string }
  if (errno !== 1062) return null
  return /for key '(?:[^'.]+\.)?([^']+)'/.exec(sqlMessage ?? '')?.[1] ?? null
}

/**
 * The INSERT of a new model instance as a batch statement, as save() would
 * write it (auto-created timestamps set, columns prepared). The model must
 * have no create hooks: they do not run. Complete it with markInserted().
 */
export function insertStatement(model: LucidRow): Statement {
  const Model = model.constructor as LucidModel
  // Lucid's own steps of save(), public on the instance though not typed.
  const steps = model as unknown as {
    initiateAutoCreateColumns(): void
    prepareForAdapter(attributes: Record<string, unknown>): Record<string, unknown>
  }
  steps.initiateAutoCreateColumns()
  const row = steps.prepareForAdapter(model.$attributes)
  const { sql, bindings } = db
    .connection(BATCH_CONNECTION)
    .insertQuery()
    .table(Model.table)
    .insert(row)
    .toSQL()
  return statement(sql, bindings)
}

/** Marks a model written by insertStatement() as persisted, with the id the batch gave it. */
export function markInserted<T extends LucidRow>(model: T, result: { insertId: number }): T {
  const Model = model.constructor as LucidModel
  model.$consumeAdapterResult({ [Model.primaryKey]: Number(result.insertId) })
  model.$hydrateOriginals()
  model.$isPersisted = true
  return model
}
