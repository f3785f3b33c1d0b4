import { BaseCommand, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/**
 * The worker process: BullMQ workers for the gateway's queues and the
 * repeatable schedules. Several workers may run side by side; schedulers are
 * upserted by id, so they are never doubled. SIGTERM lets in-flight jobs
 * finish (BullMQ returns unfinished ones to the queue as stalled).
 */
export default class QueueWork extends BaseCommand {
  static commandName = 'queue:work'
  static description = 'Run the background worker (BullMQ queues and schedules)'
  static options: CommandOptions = { startApp: true, staysAlive: true }

  @flags.array({ description: 'Queues to work (default: all)' })
  declare queues?: string[]

  @flags.number({ description: 'Jobs processed at once per queue', default: 5 })
  declare concurrency: number

  async run() {
    const { Worker } = await import('bullmq')
    const { QUEUE_NAMES, SCHEDULES, JOBS } = await import('#queue/jobs')
    const { HANDLERS } = await import('#queue/handlers')
    const { bullConnection, queue, queuePrefix, closeQueues, workerLockOptions } =
      await import('#queue/queue_manager')
    const { default: logger } = await import('@adonisjs/core/services/logger')

    // --queues payments,callbacks and --queues payments --queues callbacks both work.
    const requested = (this.queues ?? [])
      .flatMap((entry) => entry.split(','))
      .map((name) => name.trim())
    const names = (
      requested.filter(Boolean).length ? requested.filter(Boolean) : [...QUEUE_NAMES]
    ) as string[]
    const unknown = names.filter((name) => !(QUEUE_NAMES as readonly string[]).includes(name))
    if (unknown.length > 0) {
      this.logger.error(`Unknown queue(s): ${unknown.join(', ')}; known: ${QUEUE_NAMES.join(', ')}`)
      this.exitCode = 1
      await this.terminate()
      return
    }

    // BullMQ leaves connections it was given open on close(): keep them to quit on shutdown.
    const connections: ReturnType<typeof bullConnection>[] = []
    const workers = names.map((name) => {
      const connection = bullConnection()
      connections.push(connection)
      return new Worker(
        name,
        async (job) => {
          const load = HANDLERS[job.name]
          if (!load) throw new Error(`No handler for job ${job.name}`)
          return (await load())(job)
        },
        { connection, prefix: queuePrefix, concurrency: this.concurrency, ...workerLockOptions() }
      )
    })
    for (const worker of workers) {
      worker.on('failed', (job, error) =>
        logger.warn(
          { job: job?.name, job_id: job?.id, attempt: job?.attemptsMade, err: error },
          'job failed'
        )
      )
      worker.on('error', (error) => logger.error({ err: error }, 'worker error'))
    }

    for (const schedule of SCHEDULES) {
      const definition = JOBS[schedule.job]
      if (!names.includes(definition.queue)) continue
      await queue(definition.queue).upsertJobScheduler(
        schedule.id,
        { every: schedule.everyMs },
        { name: definition.name, data: {}, opts: { attempts: definition.attempts } }
      )
    }

    this.app.terminating(async () => {
      await Promise.all(workers.map((worker) => worker.close()))
      await closeQueues()
      await Promise.all(
        connections.map((connection) => connection.quit().catch(() => connection.disconnect()))
      )
    })
    logger.info({ queues: names, concurrency: this.concurrency }, 'worker started')
  }
}
