import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import type { DashboardWindow } from '#admin/queries/dashboard_scope'

/**
 * The dashboard's days: today's figure is always read live; a past day's is
 * kept in dashboard_daily_rollups once computed and read again from the
 * orders when it may have changed (byDay), so that a view costs about two
 * days of orders whatever the size of the tables (docs/benchmarks.md).
 */

/** A past day's stored figures are read again from the orders this long after the day ended… */
const SETTLE_MINUTES = 30
/** …and then once they are this old (an operator's late decision, a late payment). */
const REFRESH_MINUTES = 60

/**
 * One figure for each day of the window, computed by `compute(from, to)`
 * over [from, to). Today's is computed now. A past day's comes from
 * dashboard_daily_rollups, computed and stored when missing, and read again
 * when it was stored less than SETTLE_MINUTES after the day ended (orders of
 * 23:55 expire after midnight) or more than REFRESH_MINUTES ago. Of the
 * stored days due, one per call is read again (the newest), so a view costs
 * about two days of orders whatever the table's size; a past day's change
 * shows within REFRESH_MINUTES and the views it takes to reach that day
 * (yesterday: the next view). Today's figures are always live.
 */
export async function byDay<T>(
  figure: string,
  window: DashboardWindow,
  compute: (from: Date, to: Date) => Promise<T>
): Promise<T[]> {
  const pastDays = window.days.slice(0, -1)
  const rows = await db
    .from('dashboard_daily_rollups')
    .where('figure', figure)
    .whereIn('day', pastDays)
    .select('day', 'figures', 'computed_at')
  const stored = new Map(rows.map((row) => [row.day as string, row]))
  const bounds = pastDays.map((_, index) => {
    const from = window.start.plus({ days: index })
    return { from, to: from.plus({ days: 1 }) }
  })
  const isFresh = (index: number) => {
    const computedAt = DateTime.fromJSDate(stored.get(pastDays[index])!.computed_at)
    return (
      computedAt >= bounds[index].to.plus({ minutes: SETTLE_MINUTES }) &&
      computedAt >= window.now.minus({ minutes: REFRESH_MINUTES })
    )
  }
  // Missing days are computed; of the stored days due, only the newest (the
  // likeliest to have changed) is read again in this call.
  const due = pastDays.map((day, index) => !stored.has(day) || !isFresh(index))
  const refresh = due.lastIndexOf(true)
  const values: T[] = []
  for (const [index, day] of pastDays.entries()) {
    const row = stored.get(day)
    if (row && index !== refresh) {
      values.push(typeof row.figures === 'string' ? JSON.parse(row.figures) : row.figures)
      continue
    }
    const value = await compute(bounds[index].from.toJSDate(), bounds[index].to.toJSDate())
    await db.rawQuery(
      `INSERT INTO dashboard_daily_rollups (figure, day, figures, computed_at) VALUES (?, ?, ?, ?)
       ON DUPLICATE KEY UPDATE figures = VALUES(figures), computed_at = VALUES(computed_at)`,
      [figure, day, JSON.stringify(value), window.now.toJSDate()]
    )
    values.push(value)
  }
  values.push(await compute(window.todayStart.toJSDate(), window.now.toJSDate()))
  return values
}

/** The total of a figure over days. */
export const sum = (values: number[]) => values.reduce((total, value) => total + value, 0)

/** `part / whole` as a fraction, or null when there is nothing to divide. */
export function rate(part: number, whole: number): number | null {
  return whole > 0 ? part / whole : null
}
