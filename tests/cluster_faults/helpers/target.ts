import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import mysql from 'mysql2/promise'
import { generateSelfSignedCertificate } from '#core/tls_certificate'
import { CallbackReceiver } from '#tests/faults/helpers/receiver'
import { get } from 'node:https'
import type { AceResult } from '#tests/faults/helpers/world'
import { sleep, until } from '#tests/faults/helpers/processes'
import {
  connectionOptions,
  inTransaction,
  type TransactionWork,
} from '#tests/faults/helpers/mariadb'

/** The fault suite's shortened timings (tests/faults/helpers/world.ts), for the topology's processes. */
export const CLUSTER_TIMINGS = {
  SANDBOX_BANK_DELAY_MS: '300',
  PAYOUT_HOLD_SECONDS: '120',
  CALLBACK_RETRY_DELAY_MS: '500',
  SWEEP_INTERVAL_MS: '5000',
  SCHEDULE_CHECK_INTERVAL_MS: '2000',
  SHUTDOWN_TIMEOUT_MS: '8000',
  SETTLEMENT_DELAY_MINUTES: '0',
  CALLBACK_TIMEOUT_MS: '3000',
  CALLBACK_ALLOW_PRIVATE_TARGETS: 'true',
  API_RATE_LIMIT_PER_MERCHANT: '100000',
  API_RATE_LIMIT_PER_IP: '100000',
  API_AUTH_FAILURES_PER_IP: '100000',
  LOG_LEVEL: 'warn',
}

/**
 * What the mixed load and the end checks need of a running gateway, however
 * it is deployed: the merchants' URL(s), the CA of its certificate, a way to
 * the database it writes (through the same HAProxy as the gateway), Ace
 * against it and the merchants' callback receiver.
 */
export interface Target {
  directory: string
  /** Merchant API base URLs, used round-robin (one: HAProxy). */
  webUrls: string[]
  /** PEM of the gateway's certificate (self-signed: the CA too). */
  cert: string
  receiver: CallbackReceiver
  ace(args: string[]): Promise<AceResult>
  query<T = any>(sql: string, values?: unknown[]): Promise<T[]>
  /** One database transaction on one connection. */
  transaction(
    work: (query: (sql: string, values?: unknown[]) => Promise<any>) => Promise<void>
  ): Promise<void>
  close(): Promise<void>
}

/** Like target.ace(), but throws with the output when the command fails. */
export async function aceOk(target: Target, args: string[]) {
  const result = await target.ace(args)
  if (result.code !== 0) {
    throw new Error(
      `node ace.js ${args.join(' ')} exited ${result.code}:\n${result.stdout}${result.stderr}`
    )
  }
  return result
}

export function lastJson(output: string) {
  return JSON.parse(output.trim().split('\n').pop()!)
}

/** A mysql2 pool on `port`, used by the checks only (never by the gateway). */
export function sqlAccess(port: number, database: string) {
  const pool = mysql.createPool({
    ...connectionOptions(port, database),
    connectionLimit: 4,
    connectTimeout: 3000,
  })
  return {
    async query<T = any>(sql: string, values: unknown[] = []) {
      const [rows] = await pool.query(sql, values)
      return rows as T[]
    },
    async transaction(work: TransactionWork) {
      const connection = await pool.getConnection()
      try {
        await inTransaction(connection, work)
      } finally {
        connection.release()
      }
    },
    close: () => pool.end(),
  }
}

/**
 * A query retried while the database is failing over (the checks' own
 * reads must not fail a run because they landed in a fault).
 */
export async function patientQuery<T = any>(target: Target, sql: string, values: unknown[] = []) {
  let lastError: unknown
  for (let attempt = 0; attempt < 60; attempt++) {
    try {
      return await target.query<T>(sql, values)
    } catch (error) {
      lastError = error
      await sleep(1000)
    }
  }
  throw lastError
}

/** GET /health: the HTTP status, 0 when nothing answers. */
export function health(url: string, cert: string, timeoutMs = 3000): Promise<number> {
  return new Promise((resolve) => {
    const req = get(`${url}/health`, { ca: cert, agent: false, timeout: timeoutMs }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? 0))
    })
    req.on('timeout', () => req.destroy())
    req.on('error', () => resolve(0))
  })
}

/** Until every URL answers /health 200, at most `timeoutMs`. */
export function healthy(target: Target, timeoutMs = 60_000) {
  return until(
    async () => {
      for (const url of target.webUrls) {
        if ((await health(url, target.cert, 2000)) !== 200) return false
      }
      return true
    },
    timeoutMs,
    250
  )
}

/** The receiver's own certificate, trusted by the gateway processes through CALLBACK_CA_PATH. */
export async function startReceiver() {
  const directory = await mkdtemp(join(tmpdir(), 'gateway-cluster-faults-'))
  const pair = await generateSelfSignedCertificate()
  const caFile = join(directory, 'receiver-cert.pem')
  await writeFile(caFile, pair.cert)
  const receiver = await new CallbackReceiver(pair).start()
  return { directory, receiver, caFile }
}

export async function readCert(path: string | undefined) {
  if (!path) throw new Error('the topology environment has no TLS_CERT_PATH')
  return readFile(path, 'utf8')
}
