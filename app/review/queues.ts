import { DateTime } from 'luxon'

/**
 * The review queues, where operators decide on money automation could not.
 * This mechanism knows no queue: each domain registers its own when its
 * module loads (start/review_queues.ts loads them in every process):
 * - frozen: payments held by an operator (payments);
 * - slips: flagged slips waiting for a decision (slips);
 * - lines: unmatched and late statement lines (reconciliation);
 * - approvals: requests waiting for a second operator (approvals);
 * - callbacks: orders whose callback was given up after its attempts (callbacks).
 */
export interface ReviewQueueEntry {
  /** The queue's name in assignments, URLs and the audit log. */
  name: string
  /** Where its items live (an item that does not exist cannot be assigned). */
  items: { table: string; column: string }
}

/** A registered queue's name. */
export type ReviewQueue = string

const registered = new Map<string, ReviewQueueEntry>()

export function registerReviewQueue(entry: ReviewQueueEntry) {
  registered.set(entry.name, entry)
  return entry.name
}

/** The registered queues' names, in the order they registered. */
export function reviewQueueNames(): string[] {
  return [...registered.keys()]
}

export function isReviewQueue(value: unknown): value is ReviewQueue {
  return typeof value === 'string' && registered.has(value)
}

/** A registered queue; fails loudly for a name nobody registered. */
export function reviewQueue(name: string): ReviewQueueEntry {
  const entry = registered.get(name)
  if (!entry) throw new Error(`no review queue "${name}" is registered (start/review_queues.ts)`)
  return entry
}

/** Age buckets of the queues and the dashboard, upper bounds in hours. */
export const AGE_BUCKETS = [
  { label: 'under 1 h', hours: 1 },
  { label: '1–4 h', hours: 4 },
  { label: '4–24 h', hours: 24 },
  { label: 'over 24 h', hours: Number.POSITIVE_INFINITY },
] as const

/** How long an item has waited, for people: "12 min", "3 h 5 min", "2 d 4 h". */
export function ageLabel(since: DateTime | Date | null | undefined, now = DateTime.now()) {
  if (!since) return ''
  const start = since instanceof Date ? DateTime.fromJSDate(since) : since
  const minutes = Math.max(0, Math.floor(now.diff(start, 'minutes').minutes))
  if (minutes < 60) return `${minutes} min`
  const hours = Math.floor(minutes / 60)
  if (hours < 24) return `${hours} h ${minutes % 60} min`
  return `${Math.floor(hours / 24)} d ${hours % 24} h`
}

/** The CSS class of an age: fresh, aging (over 4 h), old (over 24 h). */
export function ageClass(since: DateTime | Date | null | undefined, now = DateTime.now()) {
  if (!since) return ''
  const start = since instanceof Date ? DateTime.fromJSDate(since) : since
  const hours = now.diff(start, 'hours').hours
  return hours >= 24 ? 'age-old' : hours >= 4 ? 'age-aging' : 'age-fresh'
}
