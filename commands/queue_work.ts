import { BaseCommand, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'
import type { QueueName } from '#core/queue/registry'

/**
 * The worker process: BullMQ workers for the gateway's queues and the
 * repeatable schedules (see app/core/queue/worker_process.ts; the job table is
 * app/jobs', registered at boot). Several workers may run side by side;
 * schedulers are upserted by id, so they are never doubled.
 * SIGTERM lets in-flight jobs finish (BullMQ returns unfinished ones to the
 * queue as stalled).
 */
export default class QueueWork extends BaseCommand {
  static commandName = 'queue:work'
  static description = 'Run the background worker (BullMQ queues and schedules)'
  static options: CommandOptions = { startApp: true, staysAlive: true }

  @flags.array({ description: 'Queues to work (default: all)' })
  declare queues?: string[]

  @flags.number({ description: 'Jobs processed at once per queue, except callbacks', default: 5 })
  declare concurrency: number

  @flags.number({
    description: 'Callback deliveries processed at once (default: CALLBACK_CONCURRENCY, 50)',
  })
  declare callbackConcurrency?: number

  async run() {
    const { queueNames } = await import('#core/queue/registry')
    const { startWorkers } = await import('#core/queue/worker_process')
    const { default: logger } = await import('@adonisjs/core/services/logger')
    const { default: callbacksConfig } = await import('#config/callbacks')

    // --queues payments,callbacks and --queues payments --queues callbacks both work.
    const requested = (this.queues ?? [])
      .flatMap((entry) => entry.split(','))
      .map((name) => name.trim())
      .filter(Boolean)
    // The queues of the job table registered at boot (app/jobs, providers/jobs_provider.ts).
    const known: readonly string[] = queueNames()
    const names = requested.length ? requested : [...known]
    const unknown = names.filter((name) => !known.includes(name))
    if (unknown.length > 0) {
      this.logger.error(`Unknown queue(s): ${unknown.join(', ')}; known: ${known.join(', ')}`)
      this.exitCode = 1
      await this.terminate()
      return
    }

    const stop = await startWorkers(names as QueueName[], this.concurrency, logger, {
      // Deliveries wait on merchants' servers, not on this process: their own, larger concurrency.
      callbacks: this.callbackConcurrency ?? callbacksConfig.concurrency,
    })
    this.app.terminating(stop)
  }
}
