import type { ApplicationService } from '@adonisjs/core/types'
import { registerJobs } from '#core/queue/registry'
import { JOBS, QUEUE_NAMES, REBUILD_SCHEDULES, SCHEDULES } from '#jobs/jobs'
import { HANDLERS } from '#jobs/handlers'

/**
 * Registers the gateway's job table (app/jobs) with the queue mechanism of
 * app/core/queue, which imports none of it. Done in register(), the first
 * step of every boot (web, worker, Ace commands that start the app, tests,
 * REPL), so that any module loaded later (preloads, commands, test files)
 * finds it. Handlers stay lazy: only a process that runs a job imports its code.
 */
export default class JobsProvider {
  constructor(protected app: ApplicationService) {}

  register() {
    registerJobs({
      queues: QUEUE_NAMES,
      jobs: JOBS,
      schedules: SCHEDULES,
      rebuild: REBUILD_SCHEDULES,
      handlers: HANDLERS,
    })
  }
}
