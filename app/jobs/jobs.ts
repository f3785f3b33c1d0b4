import queueConfig from '#config/queue'
import callbacksConfig from '#config/callbacks'
import type { JobDefinition } from '#core/queue/registry'

/**
 * Every queue, job name, retry policy and schedule of the gateway, in one
 * place. The queue mechanism of app/core/queue knows them only as registered
 * (providers/jobs_provider.ts registers this table and ./handlers.ts at
 * boot). Jobs are idempotent: BullMQ delivers at least once, so a handler
 * that runs twice must leave the same result as running once.
 */
export const QUEUE_NAMES = [
  'payments',
  'payouts',
  'callbacks',
  'reconciliation',
  'operations',
] as const
export type QueueName = (typeof QUEUE_NAMES)[number]

interface GatewayJobDefinition extends JobDefinition {
  queue: QueueName
}

export const JOBS = {
  /** Turns every open payment order past its expire_datetime into error (the only expiry path). */
  sweepExpiredPayments: {
    queue: 'payments',
    name: 'payment.sweep-expired',
    attempts: 1,
    backoff: { type: 'fixed', delay: 0 },
  },
  /** Hands a new withdraw/settlement order to its payout connector. */
  dispatchPayout: {
    queue: 'payouts',
    name: 'payout.dispatch',
    attempts: 10,
    backoff: { type: 'exponential', delay: 5000 },
  },
  /** Returns to balance every hold of a payout still open after the hold period. */
  releaseOverdueHolds: {
    queue: 'payouts',
    name: 'payout.release-overdue-holds',
    attempts: 1,
    backoff: { type: 'fixed', delay: 0 },
  },
  /**
   * One payout's hold release, delayed to its hold_expires_at: what earlier
   * versions queued for every withdrawal. Such jobs still run after an
   * upgrade (idempotent); nothing queues new ones (releaseOverdueHolds does
   * the work, docs/decisions.md).
   */
  releasePayoutHold: {
    queue: 'payouts',
    name: 'payout.release-hold',
    attempts: 10,
    backoff: { type: 'exponential', delay: 5000 },
  },
  /** The sandbox bank's answer to a transfer it accepted. */
  sandboxBankOutcome: {
    queue: 'payouts',
    name: 'payout.sandbox-outcome',
    attempts: 10,
    backoff: { type: 'exponential', delay: 2000 },
  },
  /** Safety net: dispatches orders stuck in new, asks the bank about stale pending ones. */
  sweepPayouts: {
    queue: 'payouts',
    name: 'payout.sweep',
    attempts: 1,
    backoff: { type: 'fixed', delay: 0 },
  },
  /** POSTs one callback_outbox row to the merchant's notify_url (job id = row id). */
  deliverCallback: {
    queue: 'callbacks',
    name: 'callback.deliver',
    attempts: 5,
    backoff: { type: 'fixed', delay: callbacksConfig.retryDelayMs },
  },
  /** Safety net: enqueues outbox rows whose delivery job was never created. */
  dispatchPendingCallbacks: {
    queue: 'callbacks',
    name: 'callback.dispatch-pending',
    attempts: 1,
    backoff: { type: 'fixed', delay: 0 },
  },
  /** unsettled_paid → settled_paid once the settlement delay has passed. */
  settlePayments: {
    queue: 'reconciliation',
    name: 'payment.settle',
    attempts: 3,
    backoff: { type: 'exponential', delay: 5000 },
  },
  /** Verifies again the pending slips of one deposit account, after its statement got new lines. */
  recheckSlips: {
    queue: 'reconciliation',
    name: 'slip.recheck',
    attempts: 5,
    backoff: { type: 'exponential', delay: 5000 },
  },
  /** The ledger against the bank statements (reconcile:verify), recorded for the back-office. */
  verifyReconciliation: {
    queue: 'reconciliation',
    name: 'reconciliation.verify',
    attempts: 3,
    backoff: { type: 'exponential', delay: 60_000 },
  },
  /** The ledger against itself (ledger:verify), recorded for monitoring. */
  verifyLedger: {
    queue: 'reconciliation',
    name: 'ledger.verify',
    attempts: 3,
    backoff: { type: 'exponential', delay: 60_000 },
  },
  /**
   * Fetches the statement files of every statement source due (SFTP, IMAP),
   * imports each once, and tells a day's statement missing past its hour.
   */
  fetchStatements: {
    queue: 'reconciliation',
    name: 'statements.fetch',
    attempts: 1,
    backoff: { type: 'fixed', delay: 0 },
  },
  /** Fetches one statement source now (an operator's "Fetch now"). */
  fetchStatementSource: {
    queue: 'reconciliation',
    name: 'statements.fetch-source',
    attempts: 1,
    backoff: { type: 'fixed', delay: 0 },
  },
  /** Safety net: verifies again every pending slip (a lost re-check, a provider that answers late). */
  sweepPendingSlips: {
    queue: 'reconciliation',
    name: 'slip.sweep-pending',
    attempts: 1,
    backoff: { type: 'fixed', delay: 0 },
  },
  /** Carries out one scheduled credential rotation at its run_at (job id from the rotation id). */
  performCredentialRotation: {
    queue: 'operations',
    name: 'credentials.rotate',
    attempts: 10,
    backoff: { type: 'exponential', delay: 5000 },
  },
  /** Performs due rotations whose job was lost; revokes credentials whose grace ended. */
  sweepCredentials: {
    queue: 'operations',
    name: 'credentials.sweep',
    attempts: 1,
    backoff: { type: 'fixed', delay: 0 },
  },
  /** Marks four-eyes approval requests nobody decided in time as expired, releasing what they held. */
  sweepApprovalRequests: {
    queue: 'operations',
    name: 'approvals.sweep-expired',
    attempts: 1,
    backoff: { type: 'fixed', delay: 0 },
  },
  /** Appends the seals of the audit rows written since the last run (the audit chain). */
  sealAuditLog: {
    queue: 'operations',
    name: 'audit.seal',
    attempts: 1,
    backoff: { type: 'fixed', delay: 0 },
  },
  /** The audit rows against their seals (audit:verify), recorded for monitoring and the audit page. */
  verifyAuditChain: {
    queue: 'operations',
    name: 'audit.verify',
    attempts: 3,
    backoff: { type: 'exponential', delay: 60_000 },
  },
  /** Mails the notices of sensitive requests and break-glass uses to every other admin. */
  mailNotifications: {
    queue: 'operations',
    name: 'notifications.mail',
    attempts: 1,
    backoff: { type: 'fixed', delay: 0 },
  },
  /** Forgets the answers of merchant requests older than a day (the same request, the same answer). */
  purgeMerchantRequests: {
    queue: 'operations',
    name: 'merchant-requests.purge',
    attempts: 1,
    backoff: { type: 'fixed', delay: 0 },
  },
} as const satisfies Record<string, GatewayJobDefinition>

export type JobKey = keyof typeof JOBS

/*
 * The queue mechanism's types follow this table: dispatch('jobKey', …) takes
 * a key of JOBS and queue('name') a name of QUEUE_NAMES (app/core/queue/registry.ts).
 */
declare module '#core/queue/registry' {
  interface JobTable {
    jobs: typeof JOBS
    // Not QueueName: inside this block that name is the registry's own.
    queues: (typeof QUEUE_NAMES)[number]
  }
}

/** Repeatable jobs, registered as BullMQ job schedulers (one per id, whatever the number of workers). */
export const SCHEDULES: Array<{ id: string; job: JobKey; everyMs: number }> = [
  {
    id: 'sweep-expired-payments',
    job: 'sweepExpiredPayments',
    everyMs: queueConfig.expirySweepIntervalMs,
  },
  {
    id: 'release-overdue-holds',
    job: 'releaseOverdueHolds',
    everyMs: queueConfig.expirySweepIntervalMs,
  },
  { id: 'sweep-payouts', job: 'sweepPayouts', everyMs: queueConfig.sweepIntervalMs },
  {
    id: 'dispatch-pending-callbacks',
    job: 'dispatchPendingCallbacks',
    everyMs: queueConfig.sweepIntervalMs / 2,
  },
  { id: 'settle-payments', job: 'settlePayments', everyMs: queueConfig.sweepIntervalMs },
  { id: 'sweep-credentials', job: 'sweepCredentials', everyMs: queueConfig.sweepIntervalMs },
  {
    id: 'sweep-approval-requests',
    job: 'sweepApprovalRequests',
    everyMs: queueConfig.sweepIntervalMs,
  },
  { id: 'verify-reconciliation', job: 'verifyReconciliation', everyMs: 24 * 3_600_000 },
  { id: 'verify-ledger', job: 'verifyLedger', everyMs: 24 * 3_600_000 },
  { id: 'seal-audit-log', job: 'sealAuditLog', everyMs: 10_000 },
  { id: 'verify-audit-chain', job: 'verifyAuditChain', everyMs: 24 * 3_600_000 },
  { id: 'purge-merchant-requests', job: 'purgeMerchantRequests', everyMs: 3_600_000 },
  { id: 'mail-notifications', job: 'mailNotifications', everyMs: queueConfig.sweepIntervalMs },
  // Each source is fetched at its own interval (every_minutes); this finds the due ones.
  { id: 'fetch-statements', job: 'fetchStatements', everyMs: 60_000 },
  // Each pending slip may cost a provider call: every 5 sweep intervals.
  { id: 'sweep-pending-slips', job: 'sweepPendingSlips', everyMs: queueConfig.sweepIntervalMs * 5 },
]

/**
 * The sweeps that recreate from the database the work Redis held: delivery
 * jobs of pending callback_outbox rows, payout dispatches and bank questions,
 * due credential rotations, settlement, pending slips, and the time-based
 * expiries. Each is idempotent and reads only the database. Run at once when
 * a worker finds a Redis that lost its data (rebuildFromDatabase).
 */
export const REBUILD_SCHEDULES = [
  'dispatch-pending-callbacks',
  'sweep-payouts',
  'sweep-expired-payments',
  'release-overdue-holds',
  'settle-payments',
  'sweep-credentials',
  'sweep-approval-requests',
  'sweep-pending-slips',
] as const
