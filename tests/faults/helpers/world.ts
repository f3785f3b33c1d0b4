import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { generateSelfSignedCertificate } from '#core/tls_certificate'
import { MariaDbInstance } from '#tests/faults/helpers/mariadb'
import { RedisInstance } from '#tests/faults/helpers/redis'
import { CallbackReceiver } from '#tests/faults/helpers/receiver'
import { killAll, startWatchdog } from '#tests/faults/helpers/processes'

export const APP_ROOT = fileURLToPath(new URL('../../../', import.meta.url))
export const DATABASE = 'gateway_faults'
export const QUEUE_PREFIX = '{faults}'
export const PLATFORM = 'faults'

/** Timings shortened so that recovery is observable within a scenario. */
export const TIMINGS = {
  SANDBOX_BANK_DELAY_MS: 300,
  QUEUE_LOCK_DURATION_MS: 3000,
  PAYOUT_HOLD_SECONDS: 60,
  CALLBACK_RETRY_DELAY_MS: 500,
  SWEEP_INTERVAL_MS: 5000,
  SCHEDULE_CHECK_INTERVAL_MS: 2000,
  SHUTDOWN_TIMEOUT_MS: 8000,
  /** Minimum order TTL merchant:configure accepts. */
  ORDER_TTL_SECONDS: 60,
}

/**
 * Everything the scenarios share: the private MariaDB and Redis, the TLS
 * certificate of the gateway processes (also the callback receiver's) and the
 * callback receiver. Nothing here touches the developer's services: the
 * gateway processes get DB_PORT / REDIS_PORT of the private instances only.
 */
export interface World {
  directory: string
  mariadb: MariaDbInstance
  redis: RedisInstance
  tls: { cert: string; key: string; certFile: string; keyFile: string }
  receiver: CallbackReceiver
  appKey: string
}

let current: World | undefined
let failed = false

/** Keeps the run's logs at the end (a scenario failed). */
export function markFailed() {
  failed = true
}

export function world(): World {
  if (!current) throw new Error('The fault suite world is not started (bin/test_faults.ts)')
  return current
}

/** Environment of every gateway process (web, worker, Ace) of the run. */
export function gatewayEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { mariadb, redis, tls, appKey } = world()
  // Only what a process needs from the runner's environment: no DB_*, REDIS_*,
  // QUEUE_* or NODE_ENV from the developer's shell can leak into the run.
  const inherited: NodeJS.ProcessEnv = {}
  for (const name of ['HOME', 'LANG', 'TERM', 'USER', 'TMPDIR']) {
    if (process.env[name] !== undefined) inherited[name] = process.env[name]
  }
  return {
    ...inherited,
    PATH: `${join(APP_ROOT, 'node_modules/.bin')}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    NODE_ENV: 'development',
    APP_KEY: appKey,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    DB_HOST: '127.0.0.1',
    DB_PORT: String(mariadb.port),
    DB_USER: 'root',
    DB_DATABASE: DATABASE,
    REDIS_HOST: '127.0.0.1',
    REDIS_PORT: String(redis.port),
    REDIS_DB: '0',
    QUEUE_PREFIX,
    TLS_CERT_PATH: tls.certFile,
    TLS_KEY_PATH: tls.keyFile,
    CALLBACK_CA_PATH: tls.certFile,
    CALLBACK_ALLOW_PRIVATE_TARGETS: 'true',
    CALLBACK_TIMEOUT_MS: '3000',
    SETTLEMENT_DELAY_MINUTES: '0',
    SANDBOX_BANK_DELAY_MS: String(TIMINGS.SANDBOX_BANK_DELAY_MS),
    QUEUE_LOCK_DURATION_MS: String(TIMINGS.QUEUE_LOCK_DURATION_MS),
    PAYOUT_HOLD_SECONDS: String(TIMINGS.PAYOUT_HOLD_SECONDS),
    CALLBACK_RETRY_DELAY_MS: String(TIMINGS.CALLBACK_RETRY_DELAY_MS),
    SWEEP_INTERVAL_MS: String(TIMINGS.SWEEP_INTERVAL_MS),
    SCHEDULE_CHECK_INTERVAL_MS: String(TIMINGS.SCHEDULE_CHECK_INTERVAL_MS),
    SHUTDOWN_TIMEOUT_MS: String(TIMINGS.SHUTDOWN_TIMEOUT_MS),
    // The load of a scenario is far above a merchant's normal request rate.
    API_RATE_LIMIT_PER_MERCHANT: '100000',
    API_RATE_LIMIT_PER_IP: '100000',
    API_AUTH_FAILURES_PER_IP: '100000',
    ...extra,
  }
}

export interface AceResult {
  code: number
  stdout: string
  stderr: string
}

/** Runs `node ace.js ...` against the private instances; never throws on a non-zero exit. */
export function ace(args: string[], extraEnv: Record<string, string> = {}): Promise<AceResult> {
  return new Promise((resolve) => {
    execFile(
      join(APP_ROOT, 'node_modules/.bin/node'),
      ['ace.js', ...args],
      { cwd: APP_ROOT, env: gatewayEnv(extraEnv), timeout: 120_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0
        resolve({ code, stdout: String(stdout), stderr: String(stderr) })
      }
    )
  })
}

/** Like ace(), but throws with the output when the command fails. */
export async function aceOk(args: string[]) {
  const result = await ace(args)
  if (result.code !== 0) {
    throw new Error(
      `node ace.js ${args.join(' ')} exited ${result.code}:\n${result.stdout}${result.stderr}`
    )
  }
  return result
}

/** The last line of a `--json` command's output, parsed. */
export function lastJsonLine(output: string) {
  return JSON.parse(output.trim().split('\n').pop()!)
}

/**
 * Starts the private MariaDB and Redis, creates and migrates the gateway's
 * database and its platform. Returns the teardown, which stops every process
 * of the run (also the gateway processes a failed scenario left behind).
 */
export async function startWorld(): Promise<() => Promise<void>> {
  const directory = await mkdtemp(join(tmpdir(), 'gateway-faults-'))
  startWatchdog(directory)
  const pair = await generateSelfSignedCertificate()
  const certFile = join(directory, 'cert.pem')
  const keyFile = join(directory, 'key.pem')
  await writeFile(certFile, pair.cert)
  await writeFile(keyFile, pair.key, { mode: 0o600 })

  const mariadb = new MariaDbInstance(join(directory, 'mariadb'))
  const redis = new RedisInstance(directory)
  const receiver = new CallbackReceiver(pair)
  current = {
    directory,
    mariadb,
    redis,
    tls: { ...pair, certFile, keyFile },
    receiver,
    appKey: randomBytes(24).toString('hex'),
  }
  const teardown = async () => {
    await killAll()
    await receiver.close().catch(() => {})
    if (process.env.FAULTS_KEEP_TMP) {
      console.log(`fault suite: files kept in ${directory}`)
    } else if (failed) {
      // The processes' logs explain a failure; the database files are large.
      await rm(mariadb.dataDirectory, { recursive: true, force: true })
      console.log(`fault suite: logs of the gateway processes kept in ${directory}`)
    } else {
      await rm(directory, { recursive: true, force: true })
    }
  }
  try {
    await Promise.all([mariadb.init(), redis.init(), receiver.start()])
    await aceOk(['db:create'])
    await aceOk(['migration:run', '--force'])
    await aceOk(['platform:create', '--code', PLATFORM, '--name', 'Fault suite', '--json'])
    console.log(
      `fault suite: MariaDB 127.0.0.1:${mariadb.port}, Redis 127.0.0.1:${redis.port}, files in ${directory}`
    )
  } catch (error) {
    await teardown()
    throw error
  }
  return teardown
}
