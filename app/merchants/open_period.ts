import { DateTime } from 'luxon'
import { gatewayMinuteOfDay } from '#core/clock'

const HH_MM = /^([01]\d|2[0-3]):([0-5]\d)$/

export function isValidTimeOfDay(value: string) {
  return HH_MM.test(value)
}

/**
 * Whether `at` falls inside the daily window [from, to) in Bangkok time. Null
 * bounds mean always open; from > to is a window across midnight (22:00-06:00).
 */
export function isWithinOpenPeriod(
  from: string | null,
  to: string | null,
  at: DateTime = DateTime.utc()
) {
  if (!from || !to) return true
  const minutes = gatewayMinuteOfDay(at)
  const start = toMinutes(from)
  const end = toMinutes(to)
  if (start === end) return true
  return start < end ? minutes >= start && minutes < end : minutes >= start || minutes < end
}

function toMinutes(value: string) {
  const [hours, minutes] = value.split(':').map(Number)
  return hours * 60 + minutes
}
