import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import { formatThb } from '#core/money'
import { formatGatewayDateTime, gatewayDaySql, GATEWAY_ZONE } from '#core/clock'
import { isPlatformOrderId } from '#core/order_ids'
import { movesByPlatform, whatTheFileMoves } from '#reconciliation/statement_confirmation'

/** Statuses a stored line can have, in the order the pages show them. */
const LINE_STATUSES = ['matched', 'late', 'unmatched', 'new', 'held', 'discarded'] as const
type LineCounts = Record<(typeof LINE_STATUSES)[number], number>

const asDate = (value: unknown) => (value instanceof Date ? value : new Date(String(value)))

function emptyCounts(): LineCounts {
  return { matched: 0, late: 0, unmatched: 0, new: 0, held: 0, discarded: 0 }
}

/** How the lines each import added stand now, per import (index `import_id`). */
async function lineCountsOf(importIds: number[]) {
  const counts = new Map<number, LineCounts>()
  if (importIds.length === 0) return counts
  const rows = await db
    .from('statement_lines')
    .whereIn('import_id', importIds)
    .groupBy('import_id', 'status')
    .select('import_id', 'status')
    .count('* as total')
  for (const row of rows) {
    const id = Number(row.import_id)
    const entry = counts.get(id) ?? emptyCounts()
    entry[row.status as keyof LineCounts] = Number(row.total)
    counts.set(id, entry)
  }
  return counts
}

function accountLabel(row: { bank: string; account_no: string; deposit_group?: string }) {
  return `${row.bank} ${row.account_no}`
}

/** Every deposit account, for the upload form and the filter: "KBANK 1234567890 · group (inactive)". */
export async function depositAccountChoices() {
  const rows = await db
    .from('deposit_accounts')
    .orderBy('deposit_group')
    .orderBy('id')
    .select('id', 'bank', 'account_no', 'account_name', 'deposit_group', 'active')
  return rows.map((row) => ({
    value: String(row.id),
    label: `${row.id} · ${accountLabel(row)} · ${row.deposit_group}${row.active ? '' : ' (inactive)'}`,
  }))
}

/** Past statement imports, newest first, with how their lines stand now; optionally of one account. */
export async function statementImports(filters: { account?: number }, page: number, perPage = 25) {
  const query = db
    .from('statement_imports')
    .join('deposit_accounts', 'deposit_accounts.id', 'statement_imports.deposit_account_id')
    .orderBy('statement_imports.id', 'desc')
    .select(
      'statement_imports.*',
      'deposit_accounts.bank',
      'deposit_accounts.account_no',
      'deposit_accounts.deposit_group'
    )
  if (filters.account) query.where('statement_imports.deposit_account_id', filters.account)
  const result = await query.paginate(page, perPage)
  const counts = await lineCountsOf(result.all().map((row) => Number(row.id)))
  return {
    page: result,
    rows: result.all().map((row) => importRow(row, counts.get(Number(row.id)) ?? emptyCounts())),
  }
}

function importRow(row: Record<string, any>, counts: LineCounts) {
  return {
    id: Number(row.id),
    deposit_account_id: Number(row.deposit_account_id),
    account: accountLabel(row as { bank: string; account_no: string }),
    layout: row.layout as string,
    file_name: row.file_name as string,
    file_sha256: row.file_sha256 as string,
    lines: Number(row.line_count),
    new_lines: Number(row.new_lines),
    actor: row.actor as string,
    /** How the file arrived (migration 205): upload, command, or the bank's channel (sftp, imap). */
    origin: (row.origin ?? 'upload') as string,
    origin_detail: (row.origin_detail as string | null) ?? null,
    created_at: formatGatewayDateTime(asDate(row.created_at)),
    status: (row.status ?? 'confirmed') as 'confirmed' | 'awaiting_confirmation' | 'discarded',
    status_label:
      IMPORT_STATUS_LABELS[(row.status ?? 'confirmed') as keyof typeof IMPORT_STATUS_LABELS],
    moves: row.moves_amount === null ? null : formatThb(Number(row.moves_amount)),
    decided_by: (row.decided_by as string | null) ?? null,
    decided_at: row.decided_at ? formatGatewayDateTime(asDate(row.decided_at)) : null,
    discard_reason: (row.discard_reason as string | null) ?? null,
    ...counts,
  }
}

const IMPORT_STATUS_LABELS = {
  confirmed: 'imported',
  awaiting_confirmation: 'waiting for a second operator',
  discarded: 'discarded',
}

/**
 * One import: its row, how the lines it added stand now, and a page of those
 * still waiting for an operator (unmatched and late), in file order. Null:
 * no such import.
 */
export async function statementImportPage(importId: number, page: number, perPage = 50) {
  const row = await db
    .from('statement_imports')
    .join('deposit_accounts', 'deposit_accounts.id', 'statement_imports.deposit_account_id')
    .where('statement_imports.id', importId)
    .select(
      'statement_imports.*',
      'deposit_accounts.bank',
      'deposit_accounts.account_no',
      'deposit_accounts.deposit_group'
    )
    .first()
  if (!row) return null
  const counts = (await lineCountsOf([importId])).get(importId) ?? emptyCounts()
  const lines = await db
    .from('statement_lines')
    .where('import_id', importId)
    // A file not (or never) confirmed: all its lines, as the bank would have said them.
    .whereIn('status', ['unmatched', 'late', 'held', 'discarded'])
    .orderBy('id')
    .select('id', 'line_at', 'direction', 'amount', 'reference', 'description', 'status', 'note')
    .paginate(page, perPage)
  return {
    statementImport: importRow(row, counts),
    page: lines,
    lines: lines.all().map((line) => {
      const note = line.note as string | null
      // A late line's note is the expired order it pays; other notes may start with an order id.
      const orderId = note?.slice(0, 24) ?? ''
      return {
        id: Number(line.id),
        line_at: formatGatewayDateTime(asDate(line.line_at)),
        direction: line.direction as string,
        amount: formatThb(Number(line.amount)),
        reference: line.reference as string | null,
        description: line.description as string,
        status: line.status as string,
        note,
        order_id: isPlatformOrderId(orderId, 'P') ? orderId : null,
      }
    }),
  }
}

/**
 * What a second operator reads before confirming a file imported by hand
 * (app/reconciliation/statement_confirmation.ts): its period, its totals,
 * whether it continues the account's previous statement, and what its lines
 * would move now, per platform against the four-eyes threshold.
 */
export async function confirmationFacts(importId: number, depositAccountId: number) {
  const [totals] = await db
    .from('statement_lines')
    .where('import_id', importId)
    .select(
      db.raw('MIN(line_at) AS first_at'),
      db.raw('MAX(line_at) AS last_at'),
      db.raw("SUM(direction = 'credit') AS credit_count"),
      db.raw("SUM(CASE WHEN direction = 'credit' THEN amount ELSE 0 END) AS credit_total"),
      db.raw("SUM(direction = 'debit') AS debit_count"),
      db.raw("SUM(CASE WHEN direction = 'debit' THEN amount ELSE 0 END) AS debit_total")
    )
  const ends = async (order: 'asc' | 'desc') =>
    db
      .from('statement_lines')
      .where('import_id', importId)
      .whereNotNull('balance_after')
      .orderBy('line_at', order)
      .orderBy('id', order)
      .select('line_at', 'direction', 'amount', 'balance_after')
      .first()
  const first = await ends('asc')
  const last = await ends('desc')
  const opening = first
    ? Number(first.balance_after) -
      (first.direction === 'credit' ? Number(first.amount) : -Number(first.amount))
    : null
  const previous = first
    ? await db
        .from('statement_lines')
        .where('deposit_account_id', depositAccountId)
        .whereNot('import_id', importId)
        .whereNot('status', 'discarded')
        .whereNotNull('balance_after')
        .where('line_at', '<=', first.line_at)
        .orderBy('line_at', 'desc')
        .orderBy('id', 'desc')
        .select('balance_after', 'line_at', 'import_id')
        .first()
    : null
  const continuity =
    opening === null
      ? {
          tone: 'warn',
          text: 'The file prints no running balance: its continuity cannot be checked.',
        }
      : previous
        ? {
            tone: Number(previous.balance_after) === opening ? 'good' : 'warn',
            text: `Opens at ${formatThb(opening)} THB; the account's statement closed at ${formatThb(Number(previous.balance_after))} THB on ${formatGatewayDateTime(asDate(previous.line_at))} (import ${previous.import_id}).`,
          }
        : {
            tone: 'warn',
            text: `Opens at ${formatThb(opening)} THB: the first statement with balances of this account, nothing to continue.`,
          }
  const effects = await whatTheFileMoves(db.connection(), importId, 'held')
  const platforms = await movesByPlatform(db.connection(), effects)
  const count = (value: unknown) => Number(value ?? 0)
  return {
    period: totals?.first_at
      ? `${formatGatewayDateTime(asDate(totals.first_at))} – ${formatGatewayDateTime(asDate(totals.last_at))}`
      : '—',
    credits: { count: count(totals?.credit_count), total: formatThb(count(totals?.credit_total)) },
    debits: { count: count(totals?.debit_count), total: formatThb(count(totals?.debit_total)) },
    closing: last ? formatThb(Number(last.balance_after)) : null,
    continuity,
    effects: effects.map((effect) => ({
      line_id: effect.lineId,
      amount: formatThb(effect.amount),
      direction: effect.direction,
      effect: effect.effect,
      order_id: effect.orderId,
    })),
    platforms: platforms.map((platform) => ({
      platform: platform.platform,
      amount: formatThb(platform.amount),
      threshold: platform.threshold === null ? 'none' : formatThb(platform.threshold),
      above: platform.aboveThreshold,
    })),
  }
}

/**
 * Share of statement lines matched per deposit account and Bangkok day, for
 * the last `days` days (today included), by the lines' own time. One grouped
 * read of the index `line_at, deposit_account_id, status` (a range on
 * line_at; the table's rows are not read). Bangkok has no daylight saving:
 * its day is UTC + 7 hours.
 */
export async function matchRates(days = 14, now = DateTime.utc()) {
  const today = now.setZone(GATEWAY_ZONE).startOf('day')
  const first = today.minus({ days: days - 1 })
  const dayKeys = Array.from({ length: days }, (_, index) =>
    first.plus({ days: index }).toFormat('yyyy-LL-dd')
  )
  const rows = await db
    .from('statement_lines')
    .where('line_at', '>=', first.toUTC().toJSDate())
    // Lines of a file not confirmed are not the bank's word yet.
    .whereNotIn('status', ['held', 'discarded'])
    .groupBy('deposit_account_id', 'line_day')
    .select(
      'deposit_account_id',
      db.raw(`${gatewayDaySql('line_at')} AS line_day`),
      db.raw('COUNT(*) AS line_count'),
      db.raw("SUM(status = 'matched') AS matched"),
      db.raw("SUM(status = 'late') AS late"),
      db.raw("SUM(status = 'unmatched') AS unmatched")
    )
  const accountIds = [...new Set(rows.map((row) => Number(row.deposit_account_id)))]
  const accounts =
    accountIds.length === 0
      ? []
      : await db
          .from('deposit_accounts')
          .whereIn('id', accountIds)
          .orderBy('id')
          .select('id', 'bank', 'account_no', 'deposit_group')
  const cells = new Map<
    string,
    { lines: number; matched: number; late: number; unmatched: number }
  >()
  for (const row of rows) {
    cells.set(`${Number(row.deposit_account_id)}|${row.line_day}`, {
      lines: Number(row.line_count),
      matched: Number(row.matched),
      late: Number(row.late),
      unmatched: Number(row.unmatched),
    })
  }
  return {
    days: dayKeys.map((key) => ({ key, label: DateTime.fromISO(key).toFormat('dd LLL') })),
    accounts: accounts.map((account) => ({
      id: Number(account.id),
      label: accountLabel(account),
      group: account.deposit_group as string,
      cells: dayKeys.map((key) => {
        const cell = cells.get(`${Number(account.id)}|${key}`)
        if (!cell) return { key, lines: 0, rate: null, text: '—', level: 'none' }
        const rate = Math.floor((cell.matched / cell.lines) * 100)
        return {
          key,
          ...cell,
          rate,
          text: `${rate} %`,
          // Colour bands of the table: most matched, some waiting, many waiting.
          level: rate >= 95 ? 'good' : rate >= 80 ? 'fair' : 'poor',
        }
      }),
    })),
  }
}
