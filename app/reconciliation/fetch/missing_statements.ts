import db from '@adonisjs/lucid/services/db'
import { SYSTEM } from '#core/actor'
import { recordAudit } from '#core/audit'
import { gatewayDay, gatewayPeriodStarts } from '#core/clock'
import { notify } from '#notifications/notifications'
import { sourceOf, type StatementSource } from '#reconciliation/fetch/statement_sources'

/** `HH:mm` (GMT+7): when the day's statement is expected by. */
export const DUE_BY = /^([01]\d|2[0-3]):([0-5]\d)$/

/** The instant the source's statement of `now`'s bank day is due, or null when it names no hour. */
export function statementDueAt(dueBy: string | null, now: Date) {
  const match = dueBy ? DUE_BY.exec(dueBy) : null
  if (!match) return null
  const { dayStart } = gatewayPeriodStarts(now)
  return new Date(dayStart.getTime() + (Number(match[1]) * 60 + Number(match[2])) * 60_000)
}

/**
 * The enabled sources whose account has no statement file imported from
 * the bank's channel since the start of `now`'s bank day (GMT+7) although
 * the source's `statement_due_by` has passed.
 */
export async function missingStatements(now: Date = new Date()) {
  const rows = await db
    .from('statement_sources')
    .where('enabled', true)
    .whereNotNull('statement_due_by')
    .orderBy('id')
  const { dayStart } = gatewayPeriodStarts(now)
  const due = rows
    .map(sourceOf)
    .filter(
      (source) =>
        (statementDueAt(source.statement_due_by, now)?.getTime() ?? Infinity) <= now.getTime()
    )
  if (due.length === 0)
    return { day: gatewayDay(now), sources: [] as StatementSource[], checked: rows.length }
  const arrived = await db
    .from('statement_fetched_files')
    .whereIn('deposit_account_id', [...new Set(due.map((source) => source.deposit_account_id))])
    .where('status', 'imported')
    .where('fetched_at', '>=', dayStart)
    .distinct('deposit_account_id')
  const accounts = new Set(arrived.map((row) => Number(row.deposit_account_id)))
  return {
    day: gatewayDay(now),
    sources: due.filter((source) => !accounts.has(source.deposit_account_id)),
    checked: rows.length,
  }
}

/**
 * A statement missing past its hour is told once a day per source: an
 * audit row and a notice to every admin. The day is claimed on the source
 * row (a conditional update), so two workers tell it once.
 */
export async function checkMissingStatements(now: Date = new Date()) {
  const { day, sources } = await missingStatements(now)
  let told = 0
  for (const source of sources) {
    await db.transaction(async (trx) => {
      const claimed = await trx
        .from('statement_sources')
        .where('id', source.id)
        .where((query) =>
          query.whereNull('missing_notified_day').orWhereNot('missing_notified_day', day)
        )
        .update({ missing_notified_day: day })
      if (Number(claimed) !== 1) return
      const target = { type: 'statement_source', id: String(source.id) }
      await recordAudit(trx, SYSTEM, {
        action: 'statement_source.statement_missing',
        target,
        details: {
          deposit_account_id: source.deposit_account_id,
          day,
          due_by: source.statement_due_by,
        },
      })
      await notify(trx, {
        kind: 'alert',
        action: 'statement_source.statement_missing',
        summary: `No statement of deposit account ${source.deposit_account_id} for ${day} has arrived from ${source.kind.toUpperCase()} source "${source.name}" by ${source.statement_due_by} (GMT+7)${source.last_error ? `; last error: ${source.last_error}` : ''}`,
        actor: SYSTEM,
        target,
      })
      told++
    })
  }
  return { day, missing: sources.map((source) => source.id), told }
}
