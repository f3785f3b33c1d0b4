import { execFile } from 'node:child_process'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import mysql from 'mysql2/promise'
import { ManagedProcess, StopWaiting, freePort, until } from '#tests/faults/helpers/processes'

const exec = promisify(execFile)

/**
 * A private MariaDB server for the fault suite: its own data directory,
 * socket and TCP port, root without a password over TCP (as the gateway's
 * default DB_USER=root, empty DB_PASSWORD expects). It can be stopped
 * (SIGTERM: clean shutdown, SIGKILL: crash) and started again on the same port
 * and data, which the gateway must survive.
 */
export class MariaDbInstance {
  port = 0
  process?: ManagedProcess
  starts = 0
  readonly dataDirectory: string
  readonly socket: string

  constructor(readonly directory: string) {
    this.dataDirectory = join(directory, 'data')
    this.socket = join(directory, 'mariadb.sock')
  }

  async init() {
    await mkdir(this.directory, { recursive: true })
    this.port = await freePort()
    // --auth-root-authentication-method=normal: root@localhost/127.0.0.1 with an
    // empty password instead of unix_socket authentication.
    await exec('mariadb-install-db', [
      '--no-defaults',
      `--datadir=${this.dataDirectory}`,
      '--auth-root-authentication-method=normal',
      '--skip-test-db',
      '--user=root',
    ])
    await this.start()
  }

  async start() {
    this.starts++
    this.process = new ManagedProcess(
      'mariadb',
      'mariadbd',
      [
        '--no-defaults',
        `--datadir=${this.dataDirectory}`,
        `--port=${this.port}`,
        `--socket=${this.socket}`,
        '--bind-address=127.0.0.1',
        '--user=root',
        '--skip-name-resolve',
        `--pid-file=${join(this.directory, 'mariadb.pid')}`,
        '--skip-log-bin',
        '--innodb-buffer-pool-size=128M',
        '--max-connections=500',
        '--character-set-server=utf8mb4',
        '--collation-server=utf8mb4_unicode_ci',
      ],
      { logFile: join(this.directory, 'mariadb.log') }
    )
    const ready = await until(async () => {
      if (!this.process!.alive) throw new StopWaiting('mariadbd exited')
      await this.query('SELECT 1')
      return true
    }, 60_000).catch(() => false)
    if (!ready) throw new Error(`MariaDB did not start:\n${await this.process.tail()}`)
  }

  /** Stops the server: SIGTERM is a clean shutdown, SIGKILL a crash. */
  async stop(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM') {
    if (!this.process) return
    if (signal === 'SIGKILL') await this.process.kill()
    else await this.process.stop('SIGTERM', 60_000)
  }

  #connect(database?: string) {
    return mysql.createConnection(connectionOptions(this.port, database))
  }

  /** One query on a fresh connection (the server may have restarted since the last). */
  query<T = any>(sql: string, values: unknown[] = [], database?: string): Promise<T[]> {
    return queryOnce<T>(this.port, sql, values, database)
  }

  /**
   * Runs `work` on one read-only snapshot of the whole database: every query
   * sees the same moment, while workers go on changing rows (a settlement
   * committing between two reads must not look like a lost posting).
   */
  async snapshot<T>(
    work: (query: <R = any>(sql: string, values?: unknown[]) => Promise<R[]>) => Promise<T>,
    database?: string
  ): Promise<T> {
    const connection = await this.#connect(database)
    try {
      await connection.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ')
      await connection.query('START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY')
      return await work(async (sql, values = []) => (await connection.query(sql, values))[0] as any)
    } finally {
      await connection.query('ROLLBACK').catch(() => {})
      await connection.end().catch(() => connection.destroy())
    }
  }

  /** Runs `work` in one transaction on a fresh connection; rolls back if it throws. */
  async transaction(work: TransactionWork, database?: string) {
    const connection = await this.#connect(database)
    try {
      await inTransaction(connection, work)
    } finally {
      await connection.end().catch(() => connection.destroy())
    }
  }
}

export type TransactionWork = (
  query: (sql: string, values?: unknown[]) => Promise<any>
) => Promise<void>

/** How the checks connect to a server of theirs: root over TCP, exact numbers, UTC. */
export function connectionOptions(port: number, database?: string) {
  return {
    host: '127.0.0.1',
    port,
    user: 'root',
    database,
    supportBigNumbers: true,
    bigNumberStrings: true,
    timezone: 'Z',
    connectTimeout: 2000,
  } satisfies mysql.ConnectionOptions
}

/** One query on a fresh connection to the server on `port`, closed after it. */
export async function queryOnce<T = any>(
  port: number,
  sql: string,
  values: unknown[] = [],
  database?: string
): Promise<T[]> {
  const connection = await mysql.createConnection(connectionOptions(port, database))
  try {
    const [rows] = await connection.query(sql, values)
    return rows as T[]
  } finally {
    await connection.end().catch(() => connection.destroy())
  }
}

/** Runs `work` in one transaction on `connection`; rolls back if it throws. */
export async function inTransaction(
  connection: Pick<mysql.Connection, 'beginTransaction' | 'commit' | 'rollback' | 'query'>,
  work: TransactionWork
) {
  try {
    await connection.beginTransaction()
    await work(async (sql, values = []) => (await connection.query(sql, values))[0])
    await connection.commit()
  } catch (error) {
    await connection.rollback().catch(() => {})
    throw error
  }
}
