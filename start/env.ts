/*
| Environment variables, validated at boot. Every setting has a local default
| (see .env.example) so that nothing has to be configured to start on a
| development machine; production refuses to boot without APP_KEY.
*/
import { Env } from '@adonisjs/core/env'

export default await Env.create(new URL('../', import.meta.url), {
  NODE_ENV: Env.schema.enum.optional(['development', 'production', 'test'] as const),
  APP_NAME: Env.schema.string.optional(),
  // Evaluated during validation, after .env files have been loaded into process.env.
  APP_KEY: Env.schema.secret.optionalWhen(() => process.env.NODE_ENV !== 'production', {
    message: 'APP_KEY is required in production',
  }),
  HOST: Env.schema.string.optional({ format: 'host' }),
  PORT: Env.schema.number.optional(),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: Env.schema.number.optional(),
  HTTP_HEADERS_TIMEOUT_MS: Env.schema.number.optional(),
  HTTP_REQUEST_TIMEOUT_MS: Env.schema.number.optional(),
  LOG_LEVEL: Env.schema.enum.optional([
    'fatal',
    'error',
    'warn',
    'info',
    'debug',
    'trace',
    'silent',
  ] as const),
  LOG_PRETTY: Env.schema.boolean.optional(),

  DB_HOST: Env.schema.string.optional({ format: 'host' }),
  DB_PORT: Env.schema.number.optional(),
  DB_USER: Env.schema.string.optional(),
  DB_PASSWORD: Env.schema.string.optional(),
  DB_DATABASE: Env.schema.string.optional(),
  DB_TEST_DATABASE: Env.schema.string.optional(),
  /** wsrep_sync_wait on each connection (Galera): 1 = reads wait for the cluster's latest commit. */
  DB_SYNC_WAIT: Env.schema.number.optional(),

  REDIS_HOST: Env.schema.string.optional({ format: 'host' }),
  REDIS_PORT: Env.schema.number.optional(),
  REDIS_PASSWORD: Env.schema.string.optional(),
  REDIS_DB: Env.schema.number.optional(),
  /** host:port,host:port of Redis Sentinels; when set, REDIS_HOST/PORT are ignored. */
  REDIS_SENTINELS: Env.schema.string.optional(),
  REDIS_MASTER_NAME: Env.schema.string.optional(),
  REDIS_SENTINEL_PASSWORD: Env.schema.string.optional(),

  /** Port of the Prometheus endpoint (GET /metrics) of the web process; unset = off. */
  METRICS_PORT: Env.schema.number.optional(),
  METRICS_WORKER_PORT: Env.schema.number.optional(),
  METRICS_HOST: Env.schema.string.optional({ format: 'host' }),

  QUEUE_PREFIX: Env.schema.string.optional(),
  QUEUE_LOCK_DURATION_MS: Env.schema.number.optional(),
  SWEEP_INTERVAL_MS: Env.schema.number.optional(),
  EXPIRY_SWEEP_INTERVAL_MS: Env.schema.number.optional(),
  SCHEDULE_CHECK_INTERVAL_MS: Env.schema.number.optional(),
  SHUTDOWN_TIMEOUT_MS: Env.schema.number.optional(),

  TLS_CERT_PATH: Env.schema.string.optional(),
  TLS_KEY_PATH: Env.schema.string.optional(),
  TLS_SELF_SIGNED: Env.schema.boolean.optional(),
  TRUSTED_PROXIES: Env.schema.string.optional(),

  API_TIME_TOLERANCE_SECONDS: Env.schema.number.optional(),
  PAYOUT_HOLD_SECONDS: Env.schema.number.optional(),
  SANDBOX_BANK_DELAY_MS: Env.schema.number.optional(),
  CALLBACK_RETRY_DELAY_MS: Env.schema.number.optional(),
  CALLBACK_TIMEOUT_MS: Env.schema.number.optional(),
  CALLBACK_ALLOW_PRIVATE_TARGETS: Env.schema.boolean.optional(),
  CALLBACK_CA_PATH: Env.schema.string.optional(),
  CALLBACK_CONCURRENCY: Env.schema.number.optional(),
  SETTLEMENT_DELAY_MINUTES: Env.schema.number.optional(),
  SETTLEMENT_CUTOFF: Env.schema.string.optional(),
  PAYMENT_PAGE_SLIP_MAX_BYTES: Env.schema.number.optional(),
  PAYMENT_PAGE_SLIP_COOLDOWN_SECONDS: Env.schema.number.optional(),
  PAYMENT_PAGE_SLIPS_PER_ORDER: Env.schema.number.optional(),
  PAYMENT_PAGE_SLIP_MAX_ORDER_AGE_DAYS: Env.schema.number.optional(),
  PAYMENT_PAGE_SLIP_REQUESTS_PER_IP_PER_MINUTE: Env.schema.number.optional(),
  API_BODY_LIMIT_BYTES: Env.schema.number.optional(),
  API_RATE_LIMIT_PER_MERCHANT: Env.schema.number.optional(),
  API_RATE_LIMIT_PER_IP: Env.schema.number.optional(),
  API_AUTH_FAILURES_PER_IP: Env.schema.number.optional(),
  API_AUTH_FAILURES_PER_MERCHANT: Env.schema.number.optional(),
  CREDENTIAL_GRACE_SECONDS: Env.schema.number.optional(),
  /** Read by bin/server.ts before the app boots; validated here for the rest. */
  WEB_CONCURRENCY: Env.schema.number.optional(),
  AUTH_CACHE_TTL_MS: Env.schema.number.optional(),
  AUTH_CACHE_MAX_ENTRIES: Env.schema.number.optional(),
  CONFIG_CACHE_TTL_MS: Env.schema.number.optional(),
  ADMIN_IDLE_TIMEOUT_MINUTES: Env.schema.number.optional(),
  ADMIN_SESSION_MAX_HOURS: Env.schema.number.optional(),
  ADMIN_ENROLMENT_LINK_HOURS: Env.schema.number.optional(),
  ADMIN_APPROVAL_EXPIRY_HOURS: Env.schema.number.optional(),
  ADMIN_PUBLIC_URL: Env.schema.string.optional({ format: 'url', tld: false }),
  // Slip images: local directory (fs, default) or an S3-compatible store (s3).
  DRIVE_DISK: Env.schema.enum.optional(['fs', 's3'] as const),
  DRIVE_FS_ROOT: Env.schema.string.optional(),
  S3_BUCKET: Env.schema.string.optionalWhen(() => process.env.DRIVE_DISK !== 's3', {
    message: 'S3_BUCKET is required when DRIVE_DISK=s3',
  }),
  S3_REGION: Env.schema.string.optional(),
  S3_ENDPOINT: Env.schema.string.optional({ format: 'url', tld: false }),
  S3_FORCE_PATH_STYLE: Env.schema.boolean.optional(),
  S3_SUPPORTS_ACL: Env.schema.boolean.optional(),
  S3_ACCESS_KEY_ID: Env.schema.string.optional(),
  S3_SECRET_ACCESS_KEY: Env.schema.secret.optional(),
  SLIP_VERIFIERS: Env.schema.string.optional(),
  SLIP_RECHECK_MAX_AGE_DAYS: Env.schema.number.optional(),
  // Slip-verification providers: required when SLIP_VERIFIERS names them.
  SLIP_PROVIDER_TIMEOUT_MS: Env.schema.number.optional(),
  SLIP_PROVIDER_CA_FILE: Env.schema.string.optional(),
  SLIPOK_URL: Env.schema.string.optional({ format: 'url', tld: false }),
  SLIPOK_BRANCH_ID: Env.schema.string.optionalWhen(
    () => !/(^|,)\s*slipok\s*(,|$)/.test(process.env.SLIP_VERIFIERS ?? ''),
    {
      message: 'SLIPOK_BRANCH_ID is required when SLIP_VERIFIERS names slipok',
    }
  ),
  SLIPOK_API_KEY: Env.schema.secret.optionalWhen(
    () => !/(^|,)\s*slipok\s*(,|$)/.test(process.env.SLIP_VERIFIERS ?? ''),
    {
      message: 'SLIPOK_API_KEY is required when SLIP_VERIFIERS names slipok',
    }
  ),
  EASYSLIP_URL: Env.schema.string.optional({ format: 'url', tld: false }),
  EASYSLIP_API_KEY: Env.schema.secret.optionalWhen(
    () => !/(^|,)\s*easyslip\s*(,|$)/.test(process.env.SLIP_VERIFIERS ?? ''),
    {
      message: 'EASYSLIP_API_KEY is required when SLIP_VERIFIERS names easyslip',
    }
  ),
  RECEIVABLE_WINDOW_HOURS: Env.schema.number.optional(),
  STATEMENT_CLOCK_SKEW_SECONDS: Env.schema.number.optional(),
  STATEMENT_MAIL_AUTHSERV_ID: Env.schema.string.optional(),
  // Mail to operators (enrolment links, notices to admins): smtp, or log (development).
  MAIL_MAILER: Env.schema.enum.optional(['smtp', 'log'] as const),
  MAIL_FROM: Env.schema.string.optional(),
  SMTP_HOST: Env.schema.string.optional({ format: 'host' }),
  SMTP_PORT: Env.schema.number.optional(),
  SMTP_SECURE: Env.schema.boolean.optional(),
  SMTP_USERNAME: Env.schema.string.optional(),
  SMTP_PASSWORD: Env.schema.secret.optional(),
})
