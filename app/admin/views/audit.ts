import { Readable } from 'node:stream'
import { stringify } from 'csv-stringify'
import { auditQuery, auditRows, type AuditFilters } from '#admin/queries/audit'
import { lastAuditChainCheck, sealStates, type ChainProblem } from '#core/audit_chain'
import { formatGatewayDateTime } from '#core/clock'
import type AuditLog from '#core/audit_log'
import { formatThb, parseAmount } from '#core/money'

/**
 * The audit log as the page and its CSV show it: each row with its changes
 * as a table, the last chain verification and each row's seal.
 */

/** An amount as the snapshots write it ("10000.00"), under a name that says it is money. */
const AMOUNT_KEY = /amount|fee_flat|(^|_)fee$|balance|_min$|_max$|threshold|credited|received|total/
const AMOUNT_VALUE = /^-?\d+\.\d{2}$/

/** A value as an operator reads it: text plain, amounts with separators, lists joined. */
function readable(key: string, value: unknown): string {
  if (value === undefined || value === null) return '—'
  if (typeof value === 'string') {
    if (AMOUNT_KEY.test(key) && AMOUNT_VALUE.test(value)) {
      const satang = parseAmount(value.replace(/^-/, ''))
      if (satang !== null) return formatThb(value.startsWith('-') ? -satang : satang)
    }
    return value === '' ? '""' : value
  }
  if (typeof value === 'boolean') return value ? 'yes' : 'no'
  if (Array.isArray(value)) {
    if (value.length === 0) return '(none)'
    return value.every((item) => item === null || typeof item !== 'object')
      ? value.map((item) => readable(key, item)).join(', ')
      : JSON.stringify(value, null, 1)
  }
  if (typeof value === 'object') return JSON.stringify(value, null, 1)
  return String(value)
}

/** Nested objects as dotted fields (`limits.hour`), so each leaf gets its own row. */
function flatten(
  values: Record<string, unknown> | null,
  prefix = '',
  into = new Map<string, unknown>()
) {
  for (const [key, value] of Object.entries(values ?? {})) {
    const name = prefix + key
    if (
      value !== null &&
      typeof value === 'object' &&
      !Array.isArray(value) &&
      Object.keys(value).length > 0
    ) {
      flatten(value as Record<string, unknown>, `${name}.`, into)
    } else {
      into.set(name, value)
    }
  }
  return into
}

/**
 * The row's changes as a table, field | before | after: every field of
 * either side, the changed ones marked; for a creation (nothing before)
 * only the values set. The stored JSON is shown untouched beside it.
 */
export function changeTable(
  before: Record<string, unknown> | null,
  after: Record<string, unknown> | null
) {
  const was = flatten(before)
  const now = flatten(after)
  const keys = [...new Set([...was.keys(), ...now.keys()])]
  return keys
    .filter((key) => before !== null || (now.get(key) !== null && now.get(key) !== undefined))
    .map((key) => {
      const leaf = key.slice(key.lastIndexOf('.') + 1)
      const changed =
        before === null || after === null
          ? true
          : JSON.stringify(was.get(key) ?? null) !== JSON.stringify(now.get(key) ?? null)
      return {
        key,
        before: before === null ? '' : readable(leaf, was.get(key)),
        after: after === null ? '' : readable(leaf, now.get(key)),
        changed,
      }
    })
}

/** One audit row as the page and the CSV show it. */
export function auditRow(entry: AuditLog) {
  return {
    changes: changeTable(entry.beforeValues, entry.afterValues),
    id: entry.id,
    time: formatGatewayDateTime(entry.createdAt),
    actor: entry.actor,
    action: entry.action,
    target: entry.subjectType ? `${entry.subjectType}:${entry.subjectId ?? ''}` : '',
    before: entry.beforeValues,
    after: entry.afterValues,
    reason_code: entry.reasonCode,
    comment: entry.comment,
    details: entry.details,
    ip: entry.ip,
    request_id: entry.requestId,
  }
}

const FLAG_LABELS: Record<ChainProblem['kind'], string> = {
  changed: 'does not match its seal',
  deleted: 'deleted',
  broken_link: 'seal out of chain',
  unsealed: 'not sealed',
  head: 'chain head',
}

/**
 * The last audit:verify as the page shows it (its result at the top, the
 * rows it named flagged in the list) and each listed row's seal state.
 */
export async function chainView(ids: number[]) {
  const [last, { startAuditId, states }] = await Promise.all([
    lastAuditChainCheck(),
    sealStates(ids),
  ])
  const flagged = new Map<number, ChainProblem>()
  for (const problem of last?.found ?? []) {
    if (problem.auditLogId !== null && !flagged.has(problem.auditLogId)) {
      flagged.set(problem.auditLogId, problem)
    }
  }
  return {
    startAuditId,
    last: last && {
      ...last,
      time: formatGatewayDateTime(last.at),
      // The first problems, listed above the table (a deleted row has no line of its own in it).
      shown: last.found.slice(0, 10),
    },
    sealOf(id: number) {
      const problem = flagged.get(id)
      return {
        state: states.get(id) ?? 'unchained',
        flag: problem ? { ...problem, label: FLAG_LABELS[problem.kind] } : null,
      }
    },
  }
}

/** The CSV's columns, in order. */
const CSV_COLUMNS = [
  'id',
  'time',
  'actor',
  'action',
  'target',
  'before',
  'after',
  'reason_code',
  'comment',
  'details',
  'ip',
  'request_id',
]

/** Every row the filters match as CSV, read a batch at a time while it streams. */
export function auditCsv(filters: AuditFilters) {
  const csv = stringify({
    header: true,
    columns: CSV_COLUMNS,
    cast: { object: (value) => JSON.stringify(value) },
  })
  Readable.from(
    (async function* () {
      for await (const entry of auditRows(filters)) yield auditRow(entry)
    })()
  ).pipe(csv)
  return csv
}

/** One page of the rows the filters match, newest first, each with its seal. */
export async function auditPage(filters: AuditFilters, pageNumber: number, perPage: number) {
  const entries = await auditQuery(filters).paginate(pageNumber, perPage)
  // Ids arrive as text (BIGINT): the chain's maps are keyed by number.
  const chain = await chainView(entries.all().map((entry) => Number(entry.id)))
  return {
    filters,
    chain,
    entries: entries
      .all()
      .map((entry) => ({ ...auditRow(entry), seal: chain.sealOf(Number(entry.id)) })),
    page: entries,
    query: (to: number) => new URLSearchParams({ ...filters, page: String(to) }).toString(),
    exportQuery: new URLSearchParams({ ...filters }).toString(),
  }
}
