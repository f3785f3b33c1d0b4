import type { Job } from 'bullmq'

/*
 * The queue mechanism (queue_manager, schedules, worker_process) knows the
 * application's jobs only through this registry: their table lives in
 * app/jobs (jobs.ts: queues, names, retry policies, schedules; handlers.ts:
 * name → handler) and providers/jobs_provider.ts registers it when the app
 * boots, in every process (web, worker, Ace commands, tests) before anything
 * dispatches. Core imports none of app/jobs; a lookup before registration
 * is an error, never a silent no-op.
 */

/** One job: its queue, its BullMQ name and its retry policy. */
export interface JobDefinition {
  queue: string
  name: string
  attempts: number
  backoff: { type: 'fixed' | 'exponential'; delay: number }
}

export type JobHandler = (job: Job) => Promise<unknown>

/**
 * The registered table as types. app/jobs/jobs.ts adds `jobs` (its table)
 * and `queues` (its queue names) by declaration merging, so that
 * dispatch('jobKey', …) and queue('name') are checked against the table
 * while this module imports nothing of it.
 */
export interface JobTable {}

export type QueueName = JobTable extends { queues: infer Name extends string } ? Name : string
export type JobKey = JobTable extends { jobs: infer Jobs } ? Extract<keyof Jobs, string> : string

/** A repeatable job, registered as a BullMQ job scheduler (one per id). */
export interface JobSchedule {
  id: string
  job: JobKey
  everyMs: number
}

export interface JobRegistration {
  /** Every queue, in the order workers and reports list them. */
  queues: readonly QueueName[]
  jobs: { readonly [Key in JobKey]: JobDefinition & { queue: QueueName } }
  schedules: readonly JobSchedule[]
  /**
   * Ids of the schedules whose sweeps rebuild from the database the work a
   * Redis that lost its data held (rebuildFromDatabase).
   */
  rebuild: readonly string[]
  /** Job name → handler, loaded on first use (the web process never imports job code). */
  handlers: Readonly<Record<string, () => Promise<JobHandler>>>
}

let registered: JobRegistration | undefined

/** Sets the job table (providers/jobs_provider.ts, at boot). Registering again replaces it. */
export function registerJobs(registration: JobRegistration) {
  registered = registration
}

function table(): JobRegistration {
  if (!registered) {
    throw new Error(
      'no job table registered: providers/jobs_provider.ts registers app/jobs when the app boots'
    )
  }
  return registered
}

export function queueNames(): readonly QueueName[] {
  return table().queues
}

export function jobDefinition(job: JobKey): JobDefinition & { queue: QueueName } {
  const definition = table().jobs[job]
  if (!definition) throw new Error(`Unknown job ${job}`)
  return definition
}

export function jobSchedules(): readonly JobSchedule[] {
  return table().schedules
}

export function rebuildScheduleIds(): readonly string[] {
  return table().rebuild
}

/** The handler loader of a job name, or undefined when no job of the table has that name. */
export function jobHandler(name: string): (() => Promise<JobHandler>) | undefined {
  const handlers = table().handlers
  return Object.hasOwn(handlers, name) ? handlers[name] : undefined
}
