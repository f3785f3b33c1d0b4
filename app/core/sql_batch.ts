import db from '@adonisjs/lucid/services/db'
import type { LucidModel, LucidRow } from '@adonisjs/lucid/types/model'
import { BATCH_CONNECTION, DB_TIMEZONE } from '#config/database'
import { executeText, send, type RawConnection } from '#core/prepared_statements'
import type { Statement } from '#core/sql_text'

export type { Statement } from '#core/sql_text'

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
 * mysql2's single-statement default. Every value is still a `?` placeholder
 * of its statement: each connection prepares a statement's text once and
 * executes it with the values written by mysql2's rules
 * (app/core/prepared_statements.ts, app/core/sql_text.ts).
 * Its sessions are READ COMMITTED (each statement sees the latest committed
 * rows, as the hot paths need) and strict (the refusal below needs it).
 */
export function statement(sql: string, bindings: readonly unknown[] = []): Statement {
  return { sql, bindings }
}

/**
 * What the batch paths need of a transaction: raw SQL on its connection,
 * answered as Lucid's rawQuery answers it ([rows or OK packet, fields]).
 * Lucid's transaction client and BatchTransaction both have it.
 */
export interface SqlClient {
  rawQuery(sql: string, bindings?: any[]): PromiseLike<any>
}

const BEGIN = statement('START TRANSACTION')

/** The last statement of a batch that commits. */
export const COMMIT = statement('COMMIT')

/**
 * A transaction on one connection of the batch pool whose START TRANSACTION
 * leaves with its first batch and whose COMMIT with its last: a create costs
 * its batches and nothing else. Lucid's transaction would add a BEGIN
 * and a trailing COMMIT round trip, each costing a busy web process as much
 * CPU as a batch.
 */
export class BatchTransaction implements SqlClient {
  #begun = false
  #committed = false

  constructor(private connection: RawConnection) {}

  /**
   * Runs the statements in one round trip and returns each one's result (rows
   * for a SELECT, the OK packet with affectedRows/insertId otherwise). The
   * server stops at the first statement that fails: the ones before it stay
   * done in the transaction, the ones after it never run, and the error is
   * thrown (a batch ending in COMMIT then leaves the transaction open, and
   * batchTransaction() rolls it back).
   */
  async run(statements: Statement[]): Promise<any[]> {
    if (this.#committed) throw new Error('this batch transaction is already committed')
    const opens = !this.#begun
    const sent = opens ? [BEGIN, ...statements] : statements
    // Set before sending: whatever the outcome, a transaction may be open.
    this.#begun = true
    const results = await send(
      this.connection,
      await executeText(this.connection, sent, DB_TIMEZONE)
    )
    const list = sent.length === 1 ? [results] : results
    if (statements.at(-1)?.sql === COMMIT.sql) this.#committed = true
    return opens ? list.slice(1) : list
  }

  async rawQuery(sql: string, bindings: any[] = []) {
    const [result] = await this.run([statement(sql, bindings)])
    return [result]
  }

  /** Commits what the callback left uncommitted; rolls back after a failure. */
  async end(failed: boolean) {
    if (!this.#begun || this.#committed) return
    try {
      await send(this.connection, failed ? 'ROLLBACK' : 'COMMIT')
      this.#committed = !failed
    } catch (error) {
      // The connection's state is unknown: the pool must not hand it out again.
      this.connection.__knex__disposed = error
      if (!failed) throw error
    }
  }
}

/**
 * One statement on its own (autocommit), on a connection of the batch pool:
 * for the merchant API's hot reads (/balance), which need neither the query
 * builder nor its runner, each of which cost about as much CPU as the read.
 * Returns what mysql2 answers (rows for a SELECT).
 */
export async function runStatement(one: Statement): Promise<any> {
  const client = batchClient()
  const connection = await client.acquireConnection()
  try {
    return await send(connection, await executeText(connection, [one], DB_TIMEZONE))
  } finally {
    await client.releaseConnection(connection)
  }
}

function batchClient() {
  return db.connection(BATCH_CONNECTION).getWriteClient().client as unknown as {
    acquireConnection(): Promise<RawConnection>
    releaseConnection(connection: RawConnection): Promise<void>
  }
}

/**
 * Runs `callback` in a BatchTransaction: committed when it returns (unless
 * its last batch committed), rolled back when it throws, the connection back
 * to the pool either way.
 */
export async function batchTransaction<T>(
  callback: (trx: BatchTransaction) => Promise<T>
): Promise<T> {
  const client = batchClient()
  const connection = await client.acquireConnection()
  const trx = new BatchTransaction(connection)
  try {
    const result = await callback(trx)
    await trx.end(false)
    return result
  } catch (error) {
    await trx.end(true)
    throw error
  } finally {
    await client.releaseConnection(connection)
  }
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
 * `expressions` replaces the bound value of a column by an SQL expression
 * (its own bindings), for a value the database must check as it writes.
 */
export function insertStatement(
  model: LucidRow,
  expressions: Record<string, Statement> = {}
): Statement {
  const Model = model.constructor as LucidModel
  // Lucid's own steps of save(), public on the instance though not typed.
  const steps = model as unknown as {
    initiateAutoCreateColumns(): void
    prepareForAdapter(attributes: Record<string, unknown>): Record<string, unknown>
  }
  steps.initiateAutoCreateColumns()
  const row = steps.prepareForAdapter(model.$attributes)
  // An undefined attribute takes the column's default, as in save().
  const columns = Object.keys(row).filter((column) => row[column] !== undefined)
  return statement(
    `INSERT INTO ${quoteName(Model.table)} (${columns.map(quoteName).join(', ')}) VALUES (${columns
      .map((column) => expressions[column]?.sql ?? '?')
      .join(', ')})`,
    columns.flatMap((column) => expressions[column]?.bindings ?? [row[column]])
  )
}

/** A table or column name of the gateway's own schema, quoted for MySQL. */
function quoteName(name: string) {
  return `\`${name.replaceAll('`', '``')}\``
}

/** Marks a model written by insertStatement() as persisted, with the id the batch gave it. */
export function markInserted<T extends LucidRow>(model: T, result: { insertId: number }): T {
  const Model = model.constructor as LucidModel
  model.$consumeAdapterResult({ [Model.primaryKey]: Number(result.insertId) })
  model.$hydrateOriginals()
  model.$isPersisted = true
  return model
}
