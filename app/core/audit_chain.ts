import { createHmac } from 'node:crypto'
import db from '@adonisjs/lucid/services/db'
import encryption from '@adonisjs/core/services/encryption'
import logger from '@adonisjs/core/services/logger'
import type { QueryClientContract, TransactionClientContract } from '@adonisjs/lucid/types/database'
import { recordAudit } from '#core/audit'
import { SYSTEM, type Actor } from '#core/actor'
import { withDeadlockRetry } from '#core/db_retry'

/**
 * The tamper-evident audit log: a hash chain over audit_logs, appended
 * asynchronously by the sealer and checked by audit:verify
 * (docs/decisions.md, "Tamper-evident audit log").
 *
 * recordAudit writes rows inside each action's transaction and takes no
 * lock of its own; the sealer, every 10 s in the worker, takes the rows that
 * have no seal yet (from the chain's start, in id order) and, in one
 * transaction holding the single chain-head row, appends one seal per row:
 *
 *   hash = HMAC-SHA256(key, prev_hash || "\n" || canonical JSON of the row)
 *
 * The chain's order is the seals' (seq), not the rows' ids: a row whose
 * transaction committed late is sealed in a later batch. The key is derived
 * from APP_KEY, so someone with the database's rights alone can rewrite a
 * row (dropping its trigger) but cannot compute the seal that would match.
 */

/** A row with no seal this long after it was written is reported (the sealer stopped, or it was inserted behind it). */
export const UNSEALED_AFTER_MS = 10 * 60_000
/** How far back the sealer looks for rows below its last seal (a transaction that committed late). */
const LATE_ROWS_WINDOW_MS = 24 * 3_600_000
const SEAL_BATCH = 500
/** A sealer run stops after this many batches; the next run goes on. */
const MAX_BATCHES = 40
/** Problems a verification keeps (the count is exact). */
const KEPT_PROBLEMS = 200

/** The fields a seal covers: every column of audit_logs. */
const SEALED_FIELDS = [
  'id',
  'actor',
  'operator_id',
  'action',
  'subject_type',
  'subject_id',
  'before_values',
  'after_values',
  'reason_code',
  'comment',
  'details',
  'ip',
  'request_id',
  'created_at',
] as const
type SealedField = (typeof SEALED_FIELDS)[number]
const JSON_FIELDS = new Set<SealedField>(['before_values', 'after_values', 'details'])

/** The row's columns as the seal reads them; created_at to the microsecond, as stored. */
const ROW_COLUMNS = `a.id, a.actor, a.operator_id, a.action, a.subject_type, a.subject_id,
  a.before_values, a.after_values, a.reason_code, a.comment, a.details, a.ip, a.request_id,
  DATE_FORMAT(a.created_at, '%Y-%m-%d %H:%i:%s.%f') AS created_at`

export class AuditChainError extends Error {}

let chainKeyBuffer: Buffer | undefined

/**
 * HKDF of APP_KEY (the encrypter's key-derivation for keyed digests), then
 * HMAC with this purpose: the same APP_KEY always gives the same key, and
 * nothing stored in the database reveals it.
 */
function chainKey() {
  chainKeyBuffer ??= Buffer.from(
    encryption.blindIndex('gateway audit log seal key v1', 'audit-chain'),
    'base64url'
  )
  return chainKeyBuffer
}

function hmac(...parts: string[]) {
  const mac = createHmac('sha256', chainKey())
  parts.forEach((part, index) => {
    if (index > 0) mac.update('\n')
    mac.update(part, 'utf8')
  })
  return mac.digest('hex')
}

/** JSON with every object's keys sorted: the same value gives the same bytes, however it was read back. */
export function canonicalJson(value: unknown): string {
  if (value === null || value === undefined) return 'null'
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (typeof value === 'object') {
    const record = value as Record<string, unknown>
    return `{${Object.keys(record)
      .filter((key) => record[key] !== undefined)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`)
      .join(',')}}`
  }
  return JSON.stringify(value)
}

type RawRow = Record<string, unknown>

/** One field's value as sealed: JSON columns parsed (MariaDB returns them as text), ids as text. */
function fieldValue(row: RawRow, field: SealedField): unknown {
  const value = row[field]
  if (value === null || value === undefined) return null
  if (JSON_FIELDS.has(field) && typeof value === 'string') {
    try {
      return JSON.parse(value)
    } catch {
      return value
    }
  }
  if (field === 'id') return String(value)
  if (field === 'operator_id') return Number(value)
  return value
}

function canonicalRow(row: RawRow) {
  return canonicalJson(Object.fromEntries(SEALED_FIELDS.map((f) => [f, fieldValue(row, f)])))
}

function chainHash(prevHash: string, row: RawRow) {
  return hmac('seal', prevHash, canonicalRow(row))
}

function fieldDigests(row: RawRow) {
  return Object.fromEntries(
    SEALED_FIELDS.map((f) => [f, hmac('field', f, canonicalJson(fieldValue(row, f))).slice(0, 16)])
  )
}

/** The prev_hash of the first seal: bound to the chain's start. */
function genesisHash(startAuditId: number) {
  return hmac('genesis', String(startAuditId))
}

function headMac(startAuditId: number, lastSeq: number, lastHash: string) {
  return hmac('head', String(startAuditId), String(lastSeq), lastHash)
}

const rowsOf = (result: unknown) => (result as [RawRow[]])[0]

interface Head {
  startAuditId: number
  startedAt: Date
  lastSeq: number
  lastHash: string
  macOk: boolean
}

async function readHead(client: QueryClientContract, forUpdate: boolean): Promise<Head | null> {
  const [row] = rowsOf(
    await client.rawQuery(
      `SELECT start_audit_id, started_at, last_seq, last_hash, mac
         FROM audit_chain_head WHERE id = 1${forUpdate ? ' FOR UPDATE' : ''}`
    )
  )
  if (!row) return null
  const head = {
    startAuditId: Number(row.start_audit_id),
    startedAt: new Date(row.started_at as string),
    lastSeq: Number(row.last_seq),
    lastHash: String(row.last_hash),
  }
  return { ...head, macOk: row.mac === headMac(head.startAuditId, head.lastSeq, head.lastHash) }
}

function targetOf(row: RawRow) {
  return row.subject_type ? `${row.subject_type}:${row.subject_id ?? ''}` : null
}

/**
 * Starts the chain: writes the `audit.chain_start` row (actor system) and the
 * head naming it as the first row to seal. Rows before it are not chained.
 * Run by the migration that creates the chain; refuses when a chain exists.
 */
export async function startAuditChain(client: QueryClientContract = db.connection()) {
  const run = async (trx: TransactionClientContract) => {
    if (await readHead(trx, true)) throw new AuditChainError('the audit chain is already started')
    const [[before]] = (await trx.rawQuery(
      'SELECT COUNT(*) AS total, MAX(id) AS last FROM audit_logs'
    )) as [RawRow[]]
    const entry = await recordAudit(trx, SYSTEM, {
      action: 'audit.chain_start',
      target: { type: 'audit_log', id: 'chain' },
      details: {
        unchained_rows: Number(before.total),
        last_unchained_id: before.last === null ? null : Number(before.last),
        note: 'this row and every later one is sealed in the audit chain (audit_seals); earlier rows are not',
      },
    })
    const start = Number(entry.id)
    const genesis = genesisHash(start)
    const now = new Date()
    await trx.table('audit_chain_head').insert({
      id: 1,
      start_audit_id: start,
      started_at: now,
      last_seq: 0,
      last_hash: genesis,
      mac: headMac(start, 0, genesis),
      updated_at: now,
    })
    return { startAuditId: start }
  }
  return client.isTransaction ? run(client as TransactionClientContract) : client.transaction(run)
}

export interface SealResult {
  /** Rows sealed by this run. */
  sealed: number
  /** The chain's last seal after it (0: none yet). */
  lastSeq: number
  /** false when no chain was started (no head row): nothing is sealed. */
  chain: boolean
}

/** One batch, in one transaction holding the head row. */
async function sealBatch(trx: TransactionClientContract, now: Date) {
  const head = await readHead(trx, true)
  if (!head) return { sealed: 0, lastSeq: 0, chain: false }
  if (!head.macOk) {
    throw new AuditChainError(
      'the audit chain head was changed outside the sealer (its MAC does not match)'
    )
  }
  const [last] = rowsOf(
    await trx.rawQuery('SELECT seq, hash FROM audit_seals ORDER BY seq DESC LIMIT 1')
  )
  const lastSeq = last ? Number(last.seq) : 0
  if (lastSeq !== head.lastSeq || (last && last.hash !== head.lastHash)) {
    throw new AuditChainError(
      `the audit chain head names seal #${head.lastSeq} but the last seal is #${lastSeq}: seals were removed or added outside the sealer`
    )
  }
  const [bounds] = rowsOf(await trx.rawQuery('SELECT MAX(audit_log_id) AS id FROM audit_seals'))
  const maxSealed = bounds?.id === null || bounds?.id === undefined ? 0 : Number(bounds.id)
  const rows = rowsOf(
    await trx.rawQuery(
      `SELECT ${ROW_COLUMNS}
         FROM audit_logs a LEFT JOIN audit_seals s ON s.audit_log_id = a.id
        WHERE s.seq IS NULL AND a.id >= ? AND (a.id > ? OR a.created_at >= ?)
        ORDER BY a.id LIMIT ?`,
      [head.startAuditId, maxSealed, new Date(now.getTime() - LATE_ROWS_WINDOW_MS), SEAL_BATCH]
    )
  )
  if (rows.length === 0) return { sealed: 0, lastSeq, chain: true }

  let prev = head.lastHash
  let seq = head.lastSeq
  const sealedAt = new Date()
  const seals = rows.map((row) => {
    const hash = chainHash(prev, row)
    seq += 1
    const seal = {
      seq,
      audit_log_id: Number(row.id),
      prev_hash: prev,
      hash,
      field_digests: JSON.stringify(fieldDigests(row)),
      sealed_at: sealedAt,
    }
    prev = hash
    return seal
  })
  await trx.table('audit_seals').multiInsert(seals)
  await trx.rawQuery(
    'UPDATE audit_chain_head SET last_seq = ?, last_hash = ?, mac = ?, updated_at = ? WHERE id = 1',
    [seq, prev, headMac(head.startAuditId, seq, prev), sealedAt]
  )
  return { sealed: seals.length, lastSeq: seq, chain: true, lastHash: prev }
}

/**
 * Seals every audit row that has none yet, batch by batch. Safe to run from
 * several places at once: each batch holds the head row, and a row has at
 * most one seal (unique key), so the chain never forks or seals twice.
 */
export async function sealAuditLog(now = new Date()): Promise<SealResult> {
  let sealed = 0
  let lastSeq = 0
  for (let batch = 0; batch < MAX_BATCHES; batch++) {
    const result = await withDeadlockRetry(() =>
      db.transaction((trx) => sealBatch(trx, now), { isolationLevel: 'read committed' })
    )
    if (!result.chain) {
      logger.error('the audit chain was never started (no audit_chain_head row): nothing sealed')
      return { sealed, lastSeq, chain: false }
    }
    sealed += result.sealed
    lastSeq = result.lastSeq
    // The head, in the logs too: a record outside the database of how far the chain went.
    if (result.sealed > 0) {
      logger.info(
        { sealed: result.sealed, last_seq: result.lastSeq, last_hash: result.lastHash },
        'audit log sealed'
      )
    }
    if (result.sealed < SEAL_BATCH) break
  }
  return { sealed, lastSeq, chain: true }
}

// -- Verification ------------------------------------------------------------------

export type ChainProblemKind = 'changed' | 'deleted' | 'broken_link' | 'unsealed' | 'head'

export interface ChainProblem {
  kind: ChainProblemKind
  seq: number | null
  auditLogId: number | null
  action?: string | null
  target?: string | null
  /** For a changed row: the fields whose digest differs from the seal's. */
  fields?: string[]
  detail: string
}

export interface ChainVerification {
  ok: boolean
  start: { auditLogId: number; startedAt: string } | null
  /** Seals walked. */
  sealed: number
  lastSeq: number
  /** Rows past the start with no seal, written more than 10 minutes before the check. */
  unsealed: number
  /** Every problem found (unsealed rows included); `problems` keeps the first ones. */
  problemCount: number
  problems: ChainProblem[]
  /** Rows sealed more than 10 minutes after they were written (the sealer was stopped, or a row was inserted with an earlier time): not a failure, worth a look. */
  sealedLate: { count: number; ids: number[] }
}

function describe(row: RawRow) {
  const target = targetOf(row)
  return `${row.action}${target ? ` on ${target}` : ''}`
}

/**
 * Walks the seals in chain order in one snapshot and recomputes each from
 * the row as it is now. Reads only: it never seals, so it cannot hide a row
 * inserted behind the sealer.
 */
export async function verifyAuditChain(now = new Date()): Promise<ChainVerification> {
  return db.transaction(
    async (trx) => {
      const problems: ChainProblem[] = []
      let problemCount = 0
      const report = (problem: ChainProblem) => {
        problemCount += 1
        if (problems.length < KEPT_PROBLEMS) problems.push(problem)
      }
      const head = await readHead(trx, false)
      if (!head) {
        report({
          kind: 'head',
          seq: null,
          auditLogId: null,
          detail: 'the audit chain has no head row: it was never started, or the row was deleted',
        })
      } else if (!head.macOk) {
        report({
          kind: 'head',
          seq: null,
          auditLogId: null,
          detail: 'the audit chain head was changed outside the sealer (its MAC does not match)',
        })
      }

      let sealed = 0
      let previous: { seq: number; hash: string } | null = null
      const late: number[] = []
      let lateCount = 0
      for (;;) {
        const seals = rowsOf(
          await trx.rawQuery(
            `SELECT s.seq, s.audit_log_id, s.prev_hash, s.hash, s.field_digests,
                    DATE_FORMAT(s.sealed_at, '%Y-%m-%d %H:%i:%s.%f') AS sealed_at,
                    ${ROW_COLUMNS}
               FROM audit_seals s LEFT JOIN audit_logs a ON a.id = s.audit_log_id
              WHERE s.seq > ? ORDER BY s.seq LIMIT 1000`,
            [previous?.seq ?? 0]
          )
        )
        if (seals.length === 0) break
        for (const seal of seals) {
          const seq = Number(seal.seq)
          const auditLogId = Number(seal.audit_log_id)
          sealed += 1
          if (previous === null) {
            if (head && auditLogId !== head.startAuditId) {
              report({
                kind: 'head',
                seq,
                auditLogId,
                detail: `the chain's first seal #${seq} is for audit row #${auditLogId}, not its start row #${head.startAuditId}`,
              })
            }
            if (head && seal.prev_hash !== genesisHash(head.startAuditId)) {
              report({
                kind: 'broken_link',
                seq,
                auditLogId,
                detail: `seal #${seq} (audit row #${auditLogId}) does not begin the chain started at row #${head.startAuditId}`,
              })
            }
          } else if (seal.prev_hash !== previous.hash || seq !== previous.seq + 1) {
            report({
              kind: 'broken_link',
              seq,
              auditLogId,
              detail:
                seq !== previous.seq + 1
                  ? `seals #${previous.seq + 1}–#${seq - 1} are missing: seal #${seq} (audit row #${auditLogId}) follows seal #${previous.seq}`
                  : `seal #${seq} (audit row #${auditLogId}) does not follow seal #${previous.seq}: its prev_hash is not that seal's hash`,
            })
          }
          previous = { seq, hash: String(seal.hash) }

          if (seal.id === null || seal.id === undefined) {
            report({
              kind: 'deleted',
              seq,
              auditLogId,
              detail: `audit row #${auditLogId}, sealed by seal #${seq}, is gone (deleted)`,
            })
            continue
          }
          if (chainHash(String(seal.prev_hash), seal) !== seal.hash) {
            const stored = parseDigests(seal.field_digests)
            const current = fieldDigests(seal)
            const fields = SEALED_FIELDS.filter((f) => stored?.[f] !== current[f])
            report({
              kind: 'changed',
              seq,
              auditLogId,
              action: String(seal.action),
              target: targetOf(seal),
              fields,
              detail: `audit row #${auditLogId} (${describe(seal)}) does not match its seal #${seq}${
                fields.length ? `: ${fields.join(', ')} changed` : ''
              }`,
            })
          }
          const writtenAt = Date.parse(`${String(seal.created_at).replace(' ', 'T')}Z`)
          const sealedAt = Date.parse(`${String(seal.sealed_at).replace(' ', 'T')}Z`)
          if (sealedAt - writtenAt > UNSEALED_AFTER_MS) {
            lateCount += 1
            if (late.length < 20) late.push(auditLogId)
          }
        }
      }
      if (head && (previous?.seq ?? 0) !== head.lastSeq) {
        report({
          kind: 'head',
          seq: previous?.seq ?? null,
          auditLogId: null,
          detail: `the chain head names seal #${head.lastSeq} as the last one, the seals end at #${previous?.seq ?? 0}: seals were removed`,
        })
      } else if (head && previous && previous.hash !== head.lastHash) {
        report({
          kind: 'head',
          seq: previous.seq,
          auditLogId: null,
          detail: `the last seal #${previous.seq} is not the one the chain head names`,
        })
      }

      let unsealed = 0
      if (head) {
        const cutoff = new Date(now.getTime() - UNSEALED_AFTER_MS)
        const [[count]] = (await trx.rawQuery(
          `SELECT COUNT(*) AS total FROM audit_logs a
             LEFT JOIN audit_seals s ON s.audit_log_id = a.id
            WHERE s.seq IS NULL AND a.id >= ? AND a.created_at < ?`,
          [head.startAuditId, cutoff]
        )) as [RawRow[]]
        unsealed = Number(count.total)
        if (unsealed > 0) {
          const rows = rowsOf(
            await trx.rawQuery(
              `SELECT ${ROW_COLUMNS} FROM audit_logs a
                 LEFT JOIN audit_seals s ON s.audit_log_id = a.id
                WHERE s.seq IS NULL AND a.id >= ? AND a.created_at < ?
                ORDER BY a.id LIMIT 50`,
              [head.startAuditId, cutoff]
            )
          )
          for (const row of rows) {
            report({
              kind: 'unsealed',
              seq: null,
              auditLogId: Number(row.id),
              action: String(row.action),
              target: targetOf(row),
              detail: `audit row #${row.id} (${describe(row)}), written ${row.created_at} UTC, has no seal`,
            })
          }
          problemCount += unsealed - rows.length
        }
      }

      return {
        ok: problemCount === 0,
        start: head
          ? { auditLogId: head.startAuditId, startedAt: head.startedAt.toISOString() }
          : null,
        sealed,
        lastSeq: previous?.seq ?? 0,
        unsealed,
        problemCount,
        problems,
        sealedLate: { count: lateCount, ids: late },
      }
    },
    { isolationLevel: 'repeatable read' }
  )
}

function parseDigests(value: unknown): Record<string, string> | null {
  if (value && typeof value === 'object') return value as Record<string, string>
  try {
    return JSON.parse(String(value))
  } catch {
    return null
  }
}

/**
 * verifyAuditChain, recorded (audit_verify_runs) for monitoring and the
 * audit page: the worker's daily run and the command's.
 */
export async function runAuditChainCheck(actor: Actor, now = new Date()) {
  const result = await verifyAuditChain(now)
  await db.table('audit_verify_runs').insert({
    problems: result.problemCount,
    sealed: result.sealed,
    unsealed: result.unsealed,
    start_audit_id: result.start?.auditLogId ?? null,
    result: JSON.stringify({
      start: result.start,
      last_seq: result.lastSeq,
      problems: result.problems.slice(0, 100),
      sealed_late: result.sealedLate,
    }),
    actor: actor.name.slice(0, 120),
    created_at: new Date(),
  })
  return result
}

// -- What the back-office and monitoring read ----------------------------------------

export interface LastChainCheck {
  at: Date
  actor: string
  ok: boolean
  problems: number
  sealed: number
  unsealed: number
  startAuditId: number | null
  found: ChainProblem[]
  sealedLate: { count: number; ids: number[] }
}

export async function lastAuditChainCheck(): Promise<LastChainCheck | null> {
  const [row] = rowsOf(
    await db.rawQuery('SELECT * FROM audit_verify_runs ORDER BY id DESC LIMIT 1')
  )
  if (!row) return null
  const result = (typeof row.result === 'string' ? JSON.parse(row.result) : row.result) ?? {}
  return {
    at: new Date(row.created_at as string),
    actor: String(row.actor),
    ok: Number(row.problems) === 0,
    problems: Number(row.problems),
    sealed: Number(row.sealed),
    unsealed: Number(row.unsealed),
    startAuditId: row.start_audit_id === null ? null : Number(row.start_audit_id),
    found: result.problems ?? [],
    sealedLate: result.sealed_late ?? { count: 0, ids: [] },
  }
}

/** A row's place in the chain: sealed, waiting for the sealer, or written before the chain began. */
export type SealState = 'sealed' | 'unsealed' | 'unchained'

/** The seal state of the given audit rows, and the chain's start. */
export async function sealStates(ids: number[]) {
  const head = await readHead(db.connection(), false)
  const sealedIds = new Set<number>()
  if (ids.length > 0) {
    const rows = await db.from('audit_seals').whereIn('audit_log_id', ids).select('audit_log_id')
    for (const row of rows) sealedIds.add(Number(row.audit_log_id))
  }
  const states = new Map<number, SealState>()
  for (const id of ids) {
    states.set(
      id,
      sealedIds.has(id) ? 'sealed' : head && id >= head.startAuditId ? 'unsealed' : 'unchained'
    )
  }
  return { startAuditId: head?.startAuditId ?? null, states }
}

/**
 * Rows past the chain's start with no seal, written more than 10 minutes
 * ago, for monitoring: the rows past the last seal and the late ones of the
 * last day (the whole table is the daily verification's). 0 with no chain.
 */
export async function unsealedRowCount(now = new Date()) {
  const head = await readHead(db.connection(), false)
  if (!head) return 0
  const [bounds] = rowsOf(await db.rawQuery('SELECT MAX(audit_log_id) AS id FROM audit_seals'))
  const maxSealed = bounds?.id === null || bounds?.id === undefined ? 0 : Number(bounds.id)
  const [count] = rowsOf(
    await db.rawQuery(
      `SELECT COUNT(*) AS total FROM audit_logs a
         LEFT JOIN audit_seals s ON s.audit_log_id = a.id
        WHERE s.seq IS NULL AND a.id >= ? AND (a.id > ? OR a.created_at >= ?) AND a.created_at < ?`,
      [
        head.startAuditId,
        maxSealed,
        new Date(now.getTime() - LATE_ROWS_WINDOW_MS),
        new Date(now.getTime() - UNSEALED_AFTER_MS),
      ]
    )
  )
  return Number(count?.total ?? 0)
}
