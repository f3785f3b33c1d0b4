import env from '#start/env'

/**
 * The Prometheus endpoint (GET /metrics) of each gateway process, on a port
 * of its own, never the merchant API's. Unset ports (the development and test
 * default) start no endpoint and record nothing.
 */
const metricsConfig = {
  /**
   * The web process's port. With WEB_CONCURRENCY=n, web process i (1..n)
   * listens on port + i - 1: each one is scraped as its own target.
   */
  port: env.get('METRICS_PORT'),
  /** The worker's port (`queue:work`). */
  workerPort: env.get('METRICS_WORKER_PORT'),
  /** Loopback by default: the endpoint is for the monitoring network only. */
  host: env.get('METRICS_HOST', '127.0.0.1'),
  /** Queue depths are read from Redis at most this often, whatever the scrape rate. */
  queueCacheMs: 5_000,
  /** Figures read from the database (review queues, limits, verify, Galera) at most this often. */
  databaseCacheMs: 15_000,
  /**
   * A scrape waits at most this long for fresh figures, then answers with what
   * it has: past the 2 s a dependency check is given, so a dependency that
   * hangs shows as down in the same scrape.
   */
  scrapeWaitMs: 2_500,
}

export default metricsConfig
