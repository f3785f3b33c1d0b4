import cluster from 'node:cluster'
import type { ApplicationService } from '@adonisjs/core/types'
import metricsConfig from '#config/metrics'
import type { MetricsServer } from '#metrics/metrics_server'

/**
 * Starts the Prometheus endpoint (app/metrics) when its port is configured:
 * METRICS_PORT in the web process, METRICS_WORKER_PORT in the worker
 * (`queue:work`). Nothing starts in tests, other Ace commands or codegen.
 */
export default class MetricsProvider {
  #server?: MetricsServer

  constructor(protected app: ApplicationService) {}

  async ready() {
    if (this.app.getMode() !== 'run') return
    const environment = this.app.getEnvironment()
    if (environment === 'web' && metricsConfig.port) {
      // WEB_CONCURRENCY > 1: one port per web process (cluster worker ids start at 1).
      const offset = cluster.isWorker ? cluster.worker!.id - 1 : 0
      await this.#start(metricsConfig.port + offset, 'web')
    }
    if (environment === 'console' && metricsConfig.workerPort) {
      const workerPort = metricsConfig.workerPort
      const ace = await this.app.container.make('ace')
      // Ace starts the app before it builds the command: the command is known only now.
      ace.executing(async (command, isMain) => {
        const name = (command.constructor as { commandName?: string }).commandName
        if (isMain && name === 'queue:work') await this.#start(workerPort, 'worker')
      })
    }
  }

  async #start(port: number, role: 'web' | 'worker') {
    const { startMetricsServer } = await import('#metrics/metrics_server')
    this.#server = await startMetricsServer({ port, host: metricsConfig.host, role })
    const logger = await this.app.container.make('logger')
    logger.info(
      { port: this.#server.port, host: metricsConfig.host, role },
      'metrics endpoint listening'
    )
  }

  async shutdown() {
    await this.#server?.close()
  }
}
