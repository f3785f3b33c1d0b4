import { DateTime } from 'luxon'

/**
 * The review queues, where operators decide on money automation could not:
 * - frozen: payments held by an operator (item: platform_order_id);
 * - slips: flagged slips waiting for a decision (item: payment_slips.id);
 * - lines: unmatched and late statement lines (item: statement_lines.id);
 * - approvals: requests waiting for a second operator (item: approval_requests.id);
 * - callbacks: orders whose callback was given up after its attempts (item: platform_order_id).
 */
export const REVIEW_QUEUES = ['frozen', 'slips', 'lines', 'approvals', 'callbacks'] as const
export type ReviewQueue = (typeof REVIEW_QUEUES)[number]

export function isReviewQueue(value: unknown): value is ReviewQueue {
  return typeof value === 'string' && (REVIEW_QUEUES as readonly string[]).includes(value)
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
