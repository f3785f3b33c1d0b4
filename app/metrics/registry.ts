import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'

/**
 * Every metric the gateway exposes, in one registry per process (not
 * prom-client's global one, so that nothing a library registers leaks into
 * the endpoint). Names and labels are documented in docs/operations.md;
 * monitoring/prometheus/alerts.yml and monitoring/grafana/gateway.json use
 * them, and tests/unit/alerts_runbook.spec.ts checks that every name an alert
 * uses is defined here.
 *
 * Labels never carry a raw URL, an order id, a merchant id or a token: routes
 * are the router's patterns (`/pay/:uuid`), and every other label comes from
 * a small fixed set.
 */
export const registry = new Registry()

collectDefaultMetrics({ register: registry })

// -- HTTP (each web process) -------------------------------------------------

export const httpRequests = new Counter({
  name: 'gateway_http_requests_total',
  help: 'HTTP requests answered, by route pattern, method, status and API error identifier ("" when none)',
  labelNames: ['route', 'method', 'status', 'error'] as const,
  registers: [registry],
})

export const httpDuration = new Histogram({
  name: 'gateway_http_request_duration_seconds',
  help: 'Time from the request reaching the gateway to its response being sent, by route pattern and method',
  labelNames: ['route', 'method'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
})

// -- Dependencies ---------------------------------------------------------------

export const dependencyUp = new Gauge({
  name: 'gateway_dependency_up',
  help: '1 when the dependency answered the last check of this process (mysql: SELECT 1; redis: PING), else 0',
  labelNames: ['dependency'] as const,
  registers: [registry],
})

export const dbPoolConnections = new Gauge({
  name: 'gateway_db_pool_connections',
  help: 'Connections of a knex pool by state (used, free), and its maximum (max)',
  labelNames: ['connection', 'state'] as const,
  registers: [registry],
})

export const dbPoolPendingAcquires = new Gauge({
  name: 'gateway_db_pool_pending_acquires',
  help: 'Queries waiting for a connection of a knex pool',
  labelNames: ['connection'] as const,
  registers: [registry],
})

export const dbDeadlockRetries = new Counter({
  name: 'gateway_db_deadlock_retries_total',
  help: 'Transactions run again (app/core/db_retry.ts) by errno: 1213 deadlock, 1205 lock wait timeout, 1047 Galera node not ready, 2013 connection lost',
  labelNames: ['errno'] as const,
  registers: [registry],
})

export const dbTopology = new Gauge({
  name: 'gateway_db_topology',
  help: '1 for the kind of database the connected node is: galera or standalone',
  labelNames: ['mode'] as const,
  registers: [registry],
})

export const galeraClusterSize = new Gauge({
  name: 'gateway_galera_cluster_size',
  help: 'wsrep_cluster_size as the node the gateway is connected to reports it (absent when standalone)',
  registers: [registry],
})

export const galeraNodeSynced = new Gauge({
  name: 'gateway_galera_node_synced',
  help: '1 when wsrep_local_state_comment of the connected node is Synced (absent when standalone)',
  registers: [registry],
})

export const galeraLocalState = new Gauge({
  name: 'gateway_galera_local_state',
  help: '1 for the wsrep_local_state_comment of the connected node (Synced, Donor/Desynced, Joining, ...)',
  labelNames: ['state'] as const,
  registers: [registry],
})

export const dbReadOnly = new Gauge({
  name: 'gateway_db_read_only',
  help: '1 when the node the gateway writes to has read_only set',
  registers: [registry],
})

export const redisRole = new Gauge({
  name: 'gateway_redis_role',
  help: "1 for the role of the server the gateway's Redis connection is on (master, replica, unknown)",
  labelNames: ['role'] as const,
  registers: [registry],
})

// -- Queues and jobs ---------------------------------------------------------------

export const queueJobs = new Gauge({
  name: 'gateway_queue_jobs',
  help: 'Jobs in a BullMQ queue by state (BullMQ getJobCounts, read at most every 5 s)',
  labelNames: ['queue', 'state'] as const,
  registers: [registry],
})

export const queueWorkers = new Gauge({
  name: 'gateway_queue_workers',
  help: 'Workers that reported working a queue within their last schedule checks',
  labelNames: ['queue'] as const,
  registers: [registry],
})

export const workerSchedulesMissing = new Gauge({
  name: 'gateway_worker_schedules_missing',
  help: 'Workers that report repeatable jobs (sweeps, settlement, verify) missing from Redis',
  registers: [registry],
})

export const jobDuration = new Histogram({
  name: 'gateway_job_duration_seconds',
  help: 'Run time of a job attempt in this worker, by queue, job name and result (completed, failed)',
  labelNames: ['queue', 'job', 'result'] as const,
  buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
  registers: [registry],
})

export const jobFailures = new Counter({
  name: 'gateway_job_failures_total',
  help: 'Failed job attempts by queue and job name; final="true" when BullMQ will not retry it',
  labelNames: ['queue', 'job', 'final'] as const,
  registers: [registry],
})

// -- Callbacks ----------------------------------------------------------------------

export const callbackDeliveries = new Counter({
  name: 'gateway_callback_deliveries_total',
  help: 'Merchant callback delivery attempts by outcome (delivered, retry, failed) and attempt number (1-5)',
  labelNames: ['outcome', 'attempt'] as const,
  registers: [registry],
})

export const callbackOutbox = new Gauge({
  name: 'gateway_callback_outbox',
  help: 'Callback outbox rows not delivered, by state (pending, failed)',
  labelNames: ['state'] as const,
  registers: [registry],
})

export const callbackOldestPending = new Gauge({
  name: 'gateway_callback_oldest_pending_age_seconds',
  help: 'Age of the oldest callback still pending delivery (0 when none)',
  registers: [registry],
})

// -- Business state read from the database -----------------------------------------

export const depositAccountUsage = new Gauge({
  name: 'gateway_deposit_account_usage_ratio',
  help: 'Use of an active deposit account against its limit in the current Bangkok hour or day (1 = limit reached); only limits that are set',
  labelNames: ['account', 'group', 'channel', 'period', 'measure'] as const,
  registers: [registry],
})

export const depositAccountsActive = new Gauge({
  name: 'gateway_deposit_accounts_active',
  help: 'Active deposit accounts by group and channel',
  labelNames: ['group', 'channel'] as const,
  registers: [registry],
})

export const reviewQueueItems = new Gauge({
  name: 'gateway_review_queue_items',
  help: 'Items waiting for an operator, by review queue (frozen, slips, lines, approvals, callbacks, receivables)',
  labelNames: ['queue'] as const,
  registers: [registry],
})

export const reviewQueueOldest = new Gauge({
  name: 'gateway_review_queue_oldest_age_seconds',
  help: 'How long the oldest item of a review queue has waited (0 when the queue is empty)',
  labelNames: ['queue'] as const,
  registers: [registry],
})

export const verifyOk = new Gauge({
  name: 'gateway_reconciliation_verify_ok',
  help: 'Result of the last recorded reconcile:verify run (reconciliation_runs): 1 ok, 0 problems found, -1 never run',
  registers: [registry],
})

export const verifyProblems = new Gauge({
  name: 'gateway_reconciliation_verify_problems',
  help: 'Problems the last recorded reconcile:verify run found',
  registers: [registry],
})

export const verifyAge = new Gauge({
  name: 'gateway_reconciliation_verify_age_seconds',
  help: 'Age of the last recorded reconcile:verify run (absent when never run)',
  registers: [registry],
})

export const ledgerVerifyOk = new Gauge({
  name: 'gateway_ledger_verify_ok',
  help: 'Result of the last recorded ledger:verify run (ledger_verify_runs): 1 balanced, 0 drift found, -1 never run',
  registers: [registry],
})

export const ledgerVerifyDrifts = new Gauge({
  name: 'gateway_ledger_verify_drifts',
  help: 'Drifts the last recorded ledger:verify run found',
  registers: [registry],
})

export const ledgerVerifyAge = new Gauge({
  name: 'gateway_ledger_verify_age_seconds',
  help: 'Age of the last recorded ledger:verify run (absent when never run)',
  registers: [registry],
})

export const auditChainOk = new Gauge({
  name: 'gateway_audit_chain_ok',
  help: 'Result of the last recorded audit:verify run (audit_verify_runs): 1 every sealed row matches its seal, 0 problems found, -1 never run',
  registers: [registry],
})

export const auditChainProblems = new Gauge({
  name: 'gateway_audit_chain_problems',
  help: 'Problems the last recorded audit:verify run found (changed, deleted or unsealed rows, broken links)',
  registers: [registry],
})

export const auditChainVerifyAge = new Gauge({
  name: 'gateway_audit_chain_verify_age_seconds',
  help: 'Age of the last recorded audit:verify run (absent when never run)',
  registers: [registry],
})

export const auditChainUnsealed = new Gauge({
  name: 'gateway_audit_chain_unsealed_rows',
  help: 'Audit rows past the chain start written more than 10 minutes ago and still without a seal (read now)',
  registers: [registry],
})

// -- The endpoint itself ---------------------------------------------------------------

export const sourceLastSuccess = new Gauge({
  name: 'gateway_metrics_source_last_success_timestamp_seconds',
  help: 'When a group of cached figures (queues, database, redis) was last read successfully (Unix seconds)',
  labelNames: ['source'] as const,
  registers: [registry],
})

export const sourceFailures = new Counter({
  name: 'gateway_metrics_source_failures_total',
  help: 'Reads of a group of cached figures that failed or did not finish in time',
  labelNames: ['source'] as const,
  registers: [registry],
})

export const breakGlassUses = new Gauge({
  name: 'gateway_break_glass_uses',
  help: 'Money-directing changes made from a server shell, beyond four eyes (break-glass), since the gateway was installed; any increase is alerted',
  registers: [registry],
})

export const sensitiveRequestsPending = new Gauge({
  name: 'gateway_sensitive_requests_pending',
  help: 'Approval requests to change where money goes (accounts, routes, secrets, roles) waiting for a second admin',
  registers: [registry],
})

export const sensitiveRequestOldest = new Gauge({
  name: 'gateway_sensitive_request_oldest_age_seconds',
  help: 'How long the oldest pending request to change where money goes has waited (0 when none)',
  registers: [registry],
})

// -- Statements fetched from the bank (app/reconciliation/fetch) -----------------------

export const statementFetchFailures = new Counter({
  name: 'gateway_statement_fetch_failures_total',
  help: 'Fetches of a statement source (SFTP, IMAP) that failed in this process, by source id',
  labelNames: ['source'] as const,
  registers: [registry],
})

export const statementFetchConsecutiveFailures = new Gauge({
  name: 'gateway_statement_fetch_consecutive_failures',
  help: 'Failed fetches of an enabled statement source since its last success (0: the last fetch succeeded)',
  labelNames: ['source', 'account', 'kind'] as const,
  registers: [registry],
})

export const statementFetchLastSuccess = new Gauge({
  name: 'gateway_statement_fetch_last_success_timestamp_seconds',
  help: 'When an enabled statement source was last fetched successfully (Unix seconds; 0 when never)',
  labelNames: ['source', 'account', 'kind'] as const,
  registers: [registry],
})

export const statementMissing = new Gauge({
  name: 'gateway_statement_missing',
  help: "1 when an enabled statement source's account has no statement imported from the bank today (GMT+7) past the source's statement_due_by, else 0",
  labelNames: ['source', 'account', 'kind'] as const,
  registers: [registry],
})
