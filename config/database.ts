import mysql, { type SqlValue } from 'mysql2'
import env from '#start/env'
import logger from '@adonisjs/core/services/logger'
import { defineConfig } from '@adonisjs/lucid'

/**
 * Tests never use DB_DATABASE: the suite empties every table of its database,
 * so it gets its own (DB_TEST_DATABASE, default gateway_test).
 */
export const databaseName =
  env.get('NODE_ENV') === 'test'
    ? env.get('DB_TEST_DATABASE', 'gateway_test')
    : env.get('DB_DATABASE', 'gateway')

/**
 * A dead or hung database must fail a request in about two seconds (503,
 * retry with backoff), not hold the merchant's call for mysql2's default 10 s:
 * a MariaDB on the same network completes its handshake in milliseconds, so
 * 2 s only ever trips on a server that is not answering.
 */
export const serverConnection = {
  host: env.get('DB_HOST', '127.0.0.1'),
  port: env.get('DB_PORT', 3306),
  user: env.get('DB_USER', 'root'),
  password: env.get('DB_PASSWORD', ''),
  connectTimeout: 2000,
}

/**
 * knex reports a failed connection attempt as a warning with the whole stack;
 * the exception handler already logs each outage once with its cause, so keep
 * only the first line.
 */
function firstLine(message: unknown) {
  return String(message).split('\n')[0]
}
const knexLog = {
  warn: (message: unknown) => logger.warn(firstLine(message)),
  error: (message: unknown) => logger.error(firstLine(message)),
  deprecate: (message: unknown) => logger.info(String(message)),
  debug: (message: unknown) => logger.debug(String(message)),
}

/**
 * Every session is strict, whatever the server's default: a value a column
 * cannot hold fails the statement instead of being stored altered, which the
 * conditional writes of app/core/sql_batch.ts rely on.
 */
const STRICT_SESSION =
  "SET SESSION sql_mode = CONCAT_WS(',', @@SESSION.sql_mode, 'STRICT_TRANS_TABLES')"

/**
 * DB_SYNC_WAIT (Galera): every session also sets wsrep_sync_wait, so that a
 * read waits until the node has applied every write set the cluster had
 * committed when the read began (1 = reads; see the Galera notes). A plain
 * MariaDB accepts the variable and ignores it; a server without it (MySQL)
 * fails the connection with a message that names the setting, rather than
 * serving the stale reads the operator asked to rule out.
 */
export function sessionSetup(syncWait: number | undefined, statements = '') {
  // An extra assignment of the same SET: the main pool sends one statement per query.
  const sql =
    STRICT_SESSION +
    (syncWait === undefined ? '' : `, SESSION wsrep_sync_wait = ${Math.trunc(syncWait)}`) +
    statements
  return (conn: SessionConnection, done: AfterCreateDone) =>
    conn.query(sql, (error) => {
      if (error && (error as { errno?: number }).errno === 1193 && syncWait !== undefined) {
        error = new Error(
          `DB_SYNC_WAIT is set but the server has no wsrep_sync_wait (not MariaDB): unset DB_SYNC_WAIT (${error.message})`
        )
      }
      done(error, conn)
    })
}

/** The pool of statement batches (app/core/sql_batch.ts). */
export const BATCH_CONNECTION = 'mysql_batched'

/**
 * The time zone mysql2 writes and reads DATETIME values in: UTC, whatever
 * the server's zone. The statement batches write their values with it too.
 */
export const DB_TIMEZONE = 'Z'

const connection = {
  ...serverConnection,
  database: databaseName,
  timezone: DB_TIMEZONE,
  dateStrings: false,
  // BIGINT satang must never pass through a float.
  supportBigNumbers: true,
  bigNumberStrings: true,
  charset: 'utf8mb4',
}

const dbConfig = defineConfig({
  connection: 'mysql',
  connections: {
    mysql: {
      client: 'mysql2',
      connection,
      // A dead server fails a request at once (refused) or after the 2 s
      // connect timeout (no handshake): knex passes a failed connect on to
      // the waiting request. Waiting for a free connection while all 20 are
      // busy is load, not an outage: it ends after 15 s (knex: 60 s), which
      // sheds an overload with 503 before merchants' clients give up.
      pool: {
        min: 0,
        max: 20,
        acquireTimeoutMillis: 15_000,
        afterCreate: sessionSetup(env.get('DB_SYNC_WAIT')),
      },
      migrations: {
        naturalSort: true,
        paths: ['database/migrations'],
      },
      schemaGeneration: { enabled: false },
      // Lucid passes this on to knex (its type does not list it).
      ...{ log: knexLog },
    },
    /**
     * Statement batches of the hot paths (app/core/sql_batch.ts): the only
     * pool that accepts several statements in one query. Its sessions are
     * READ COMMITTED and strict, set once per connection so that a
     * transaction costs no extra round trip to set them.
     */
    [BATCH_CONNECTION]: {
      client: 'mysql2',
      // Lucid's type does not list mysql2's multipleStatements and queryFormat.
      connection: { ...connection, ...{ multipleStatements: true, queryFormat: batchQueryFormat } },
      pool: {
        min: 0,
        max: 20,
        acquireTimeoutMillis: 15_000,
        afterCreate: sessionSetup(
          env.get('DB_SYNC_WAIT'),
          '; SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED'
        ),
      },
      ...{ log: knexLog },
    },
  },
})

/**
 * The batch pool's client-side formatting: a batch arrives with its values
 * already in its text (app/core/sql_text.ts) and is sent as it is, not read
 * again for placeholders; a query with values (knex's own) is formatted as
 * mysql2 formats it.
 */
function batchQueryFormat(sql: string, values: unknown[] | undefined, timezone: string) {
  if (values === undefined || values.length === 0) return sql
  return mysql.format(sql, values as SqlValue[], false, timezone)
}

interface SessionConnection {
  query(sql: string, callback: (error: Error | null) => void): void
}
type AfterCreateDone = (error: Error | null, conn: unknown) => void

export default dbConfig
