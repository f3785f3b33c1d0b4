import { hash } from 'node:crypto'
import db from '@adonisjs/lucid/services/db'
import { escape } from 'mysql2'
import dbConfig from '#config/database'
import type { QueryClientContract, TransactionClientContract } from '@adonisjs/lucid/types/database'
import type { DatabaseQueryBuilderContract } from '@adonisjs/lucid/types/querybuilder'
import type DepositAccount from '#payments/models/deposit_account'
import { StatementFormatError, type ParsedStatementLine } from '#reconciliation/statement_line'
import { formatThb } from '#core/money'
import { findCandidates } from '#reconciliation/matching/candidates'
import {
  isPayoutReference,
  judgeLine,
  type Judgement,
  type RuleOrder,
} from '#reconciliation/matching/rules'
import {
  LINE_COLUMNS,
  toLineRow,
  type LineRow,
  type MatchResult,
} from '#reconciliation/matching/line_row'
import { settleLines } from '#reconciliation/matching/settle'
import { setLines } from '#reconciliation/matching/line_status'
import { lockBankAccount, postLedgerTransactions } from '#ledger/ledger'
import { bankStatementPosting } from '#ledger/recipes'
import { gatewayDay, gatewayDaySql, gatewayPeriodStarts } from '#core/clock'
import type { Actor } from '#core/actor'
import { assertContinues, BalanceChain } from '#reconciliation/statement_continuity'
import { inTransaction } from '#core/transaction'

export interface ImportSummary {
  importId: number
  lines: number
  newLines: number
  results: Record<MatchResult, number>
}

/**
 * How an import is cut up: lines stored per multi-row INSERT and judged per
 * batch (one read of the lines and of their candidate orders), lines
 * settled per transaction, and how many of those transactions run at once
 * (`settleInTurn`). Tests lower them to cross batch borders with few lines.
 */
export const statementBatching = { lines: 1000, linesPerTransaction: 1000, transactionsAtOnce: 2 }

/**
 * Stores a parsed statement of one deposit account in the caller's
 * transaction: one `statement_imports` row, then each line under its
 * transfer's identity (`transferKey`, unique across accounts) and a
 * fingerprint unique per account (a line already known adds nothing), in
 * multi-row INSERT IGNOREs as the lines arrive: a streamed file is never
 * held whole. A bad line thrown by the parser rolls the caller's transaction
 * back, so an import stays all or nothing. Identical lines in one file (two
 * transfers of the same amount in the same minute) are kept apart by their
 * occurrence number. Returns the import id, how many lines the file had and
 * how many were new.
 *
 * With `judge`, each batch is judged before it is inserted, as `matchImport`
 * judges it: a line the rules give a verdict without any order's state
 * (`verdictWithoutOrder`: no order holds it, a debit without a payout, a
 * late payment) is stored with it, one write instead of two; the others
 * are stored `new` and matched after the commit. `judged` counts the
 * verdicts stored.
 */
/**
 * How a statement file reached the gateway: a person's hands (`upload` in the
 * back-office, `command` from the shell) or the bank's own channel, fetched
 * by the worker (`sftp`, `imap`) with the channel's name for the file.
 */
export type StatementChannel = 'upload' | 'command' | 'sftp' | 'imap'

export interface StatementOrigin {
  channel: StatementChannel
  /** The remote path, or the mail's Message-ID and attachment name. */
  detail?: string | null
  /** What vouches that the bank wrote it (fetch/channel.ts); null: nothing does. */
  vouchedBy?: string | null
}

/**
 * A file from the bank's own channel, not one a person handled: fetched by
 * the worker, and vouched for (the SFTP server's pinned key, the receiving
 * mail server's DKIM verdict). A mail that only says it is from the bank is
 * a person's file.
 */
export function fromTheBank(origin: StatementOrigin | undefined) {
  return (origin?.channel === 'sftp' || origin?.channel === 'imap') && Boolean(origin.vouchedBy)
}

export async function storeStatement(
  trx: TransactionClientContract,
  statement: {
    account: DepositAccount
    layout: string
    fileName: string
    fileSha256: string
    /** Where the file came from (migration 205); a person's upload when left out. */
    origin?: StatementOrigin
    /** The file's lines, one by one or in batches (`parseStatementBatches`). */
    lines:
      | Iterable<ParsedStatementLine>
      | AsyncIterable<ParsedStatementLine>
      | AsyncIterable<ParsedStatementLine[]>
    actor: Actor
    judge?: boolean
    /**
     * Asked once the lines are stored, before the bank postings: true keeps
     * the file's lines held for a second operator (statement_confirmation.ts),
     * and the ledger's bank account does not take them yet.
     */
    hold?: (trx: TransactionClientContract, importId: number) => Promise<boolean>
  }
) {
  const { account } = statement
  // First: no payment of the account is marked paid on a search for its
  // line while lines are being stored that the search could not yet see.
  await lockBankAccount(trx, account.id)
  const [importId] = await trx.table('statement_imports').insert({
    deposit_account_id: account.id,
    layout: statement.layout,
    file_name: statement.fileName.slice(-255),
    file_sha256: statement.fileSha256,
    line_count: 0,
    new_lines: 0,
    actor: statement.actor.name.slice(0, 120),
    origin: statement.origin?.channel ?? 'upload',
    origin_detail: statement.origin?.detail?.slice(0, 512) ?? null,
    created_at: new Date(),
  })

  const rowsOf = new StoredLineRows(account.id, Number(importId))
  const chain = new BalanceChain()
  let batch: StoredLineValues[] = []
  let lineCount = 0
  let newLines = 0
  // What the file's rows say, counted as they are queued: the import's own
  // figures as long as every row is new (none was a line already known).
  let everyRowNew = true
  const verdicts = { unmatched: 0, late: 0 }
  const days = new BankDays()
  const columns = STORED_LINE_COLUMNS
  const insertRows = async (rows: StoredLineValues[]) => {
    if (rows.length === 0) return 0
    const result = await sendWritten(
      trx,
      `INSERT IGNORE INTO statement_lines (${columns.join(', ')}) VALUES ${sqlRows(rows)}`
    )
    await refuseOtherAccountsTransfers(trx, account.id, rows, columns)
    const inserted = Number(result.affectedRows)
    if (inserted !== rows.length) everyRowNew = false
    return inserted
  }
  // The INSERTs run one after the other on the import's connection while
  // the next batches are parsed and judged (on a connection of their own:
  // committed orders, unlocked, as matchImport reads them). Parsing runs up
  // to two batches ahead of the INSERT in progress, so that a slower batch
  // on either side does not leave the other waiting; at most four batches
  // are held.
  let inserting: Promise<void> = Promise.resolve()
  const queued: Array<Promise<void>> = []
  const flush = async () => {
    if (batch.length === 0) return
    const rows = batch
    batch = []
    const judging = statement.judge
      ? judgeRows(db.connection(), account.id, rows, columns).then((counts) => {
          verdicts.unmatched += counts.unmatched
          verdicts.late += counts.late
        })
      : Promise.resolve()
    // Once the batch before is stored, and this one judged; nothing after a failure.
    inserting = Promise.all([inserting, judging]).then(async () => {
      newLines += await insertRows(rows)
    })
    // Failing now or when awaited: never unhandled meanwhile.
    judging.catch(() => {})
    inserting.catch(() => {})
    queued.push(inserting)
    if (queued.length > 2) await queued.shift()
  }
  try {
    await parseAndQueue()
    await flush()
  } finally {
    await inserting.catch(() => {})
  }
  await inserting
  await assertOpeningContinues(trx, account.id, Number(importId), chain)
  // The verdicts stored: the rows this import added (a line already known
  // keeps its import), counted as they were judged when every row was new.
  const judged = { unmatched: 0, late: 0 }
  if (statement.judge && everyRowNew) Object.assign(judged, verdicts)
  else if (statement.judge) {
    const counts = await trx
      .from('statement_lines')
      .where('import_id', importId)
      .whereIn('status', ['unmatched', 'late'])
      .groupBy('status')
      .select('status')
      .count('* as total')
    for (const { status, total } of counts) judged[status as keyof typeof judged] = Number(total)
  }
  await trx
    .from('statement_imports')
    .where('id', importId)
    .update({ line_count: lineCount, new_lines: newLines })
  const held = statement.hold ? await statement.hold(trx, Number(importId)) : false
  if (!held) {
    // The bank days of the lines this import added: summed as they were
    // queued when every row was new, else read back as a confirmation does.
    if (everyRowNew) await postBankDayTotals(trx, account.id, Number(importId), days.totals())
    else await postBankDays(trx, account.id, Number(importId))
  }
  return { importId: Number(importId), newLines, lines: lineCount, judged, held }

  async function parseAndQueue() {
    for await (const item of statement.lines) {
      for (const line of Array.isArray(item) ? item : [item]) {
        lineCount++
        chain.add(line)
        days.add(line)
        batch.push(rowsOf.row(line))
        if (batch.length >= statementBatching.lines) await flush()
      }
    }
  }
}

/** The timezone the connection reads and writes DATETIMEs in (config/database.ts). */
const SQL_TIMEZONE =
  (dbConfig.connections[dbConfig.connection].connection as { timezone?: string } | undefined)
    ?.timezone ?? 'local'

/**
 * Rows as SQL values, `(…), (…)`: each value escaped as mysql2 escapes a
 * bound parameter (strings quoted and escaped, dates in the connection's
 * timezone). Joined, not appended: one flat string, not a rope of a
 * hundred thousand pieces that every later reader walks.
 */
function sqlRows(rows: StoredLineValues[]) {
  // A file's lines share their minute, and a batch its creation times: each
  // column's last date is written once.
  const dates = new Map<number, { time: number; literal: string }>()
  const literal = (value: StoredLineValues[number], column: number) => {
    if (!(value instanceof Date)) return escape(value, false, SQL_TIMEZONE)
    const last = dates.get(column)
    if (last?.time === value.getTime()) return last.literal
    const written = { time: value.getTime(), literal: dateLiteral(value) }
    dates.set(column, written)
    return written.literal
  }
  return rows.map((values) => `(${values.map(literal).join(', ')})`).join(', ')
}

/**
 * A DATETIME literal as mysql2 writes a Date for the connection's timezone:
 * for UTC ('Z'), from the ISO form, without the timezone parsed again for
 * every value; any other timezone, or a year DATETIME cannot hold, as mysql2.
 */
function dateLiteral(date: Date) {
  const year = date.getUTCFullYear()
  if (SQL_TIMEZONE !== 'Z' || !(year >= 1000 && year <= 9999)) {
    return escape(date, false, SQL_TIMEZONE)
  }
  const iso = date.toISOString()
  return `'${iso.slice(0, 10)} ${iso.slice(11, 23)}'`
}

/** mysql2's connection, as a knex transaction holds it. */
interface WrittenQueryConnection {
  query(
    options: { sql: string; values: null },
    callback: (error: Error | null, result: { affectedRows: number }) => void
  ): void
}

/**
 * A statement written out whole (`sqlRows`), sent on the transaction's own
 * connection as it is. Through the query builder, knex and then mysql2
 * would each scan a batch's megabyte of text for placeholders it does not
 * have, which cost the import more CPU than writing the text.
 */
async function sendWritten(trx: TransactionClientContract, sql: string) {
  const knexTransaction = trx.getWriteClient() as unknown as {
    client: { acquireConnection(): Promise<WrittenQueryConnection> }
  }
  const connection = await knexTransaction.client.acquireConnection()
  return new Promise<{ affectedRows: number }>((resolve, reject) =>
    connection.query({ sql, values: null }, (error, result) =>
      error ? reject(error) : resolve(result)
    )
  )
}

/** Credits and debits of a file's lines by bank day (GMT+7), summed as they come. */
class BankDays {
  readonly #days = new Map<string, { credits: number; debits: number }>()
  /** The bank day of the line before, and the instants it spans. */
  #current = { from: 0, to: -1, totals: { credits: 0, debits: 0 } }

  add(line: ParsedStatementLine) {
    const at = line.lineAt.getTime()
    let current = this.#current
    if (at < current.from || at >= current.to) {
      const day = gatewayDay(line.lineAt)
      const from = gatewayPeriodStarts(line.lineAt).dayStart.getTime()
      let totals = this.#days.get(day)
      if (!totals) this.#days.set(day, (totals = { credits: 0, debits: 0 }))
      current = this.#current = { from, to: from + 86_400_000, totals }
    }
    if (line.direction === 'credit') current.totals.credits += line.amount
    else current.totals.debits += line.amount
  }

  totals() {
    return [...this.#days]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([day, totals]) => ({ day, ...totals }))
  }
}

/** The columns `storeStatement` writes a line with, in the order of `StoredLineRows.row`. */
export const STORED_LINE_COLUMNS = [
  'deposit_account_id',
  'import_id',
  'fingerprint',
  'line_at',
  'direction',
  'amount',
  'reference',
  'trans_ref',
  'transfer_key',
  'balance_after',
  'description',
  'status',
  'note',
  'created_at',
]

export type StoredLineValues = Array<string | number | Date | null>

/**
 * The rows of one file's lines as `storeStatement` inserts them: each under
 * a fingerprint unique per account (the line's own terms and its occurrence
 * in the file: two transfers of the same amount in the same minute are kept
 * apart) and its transfer's identity (`transferKey`).
 */
export class StoredLineRows {
  readonly #seen = new Map<string, number>()
  constructor(
    readonly accountId: number,
    readonly importId: number
  ) {}

  row(line: ParsedStatementLine): StoredLineValues {
    // Satang, as every parser gives them: the day's bank totals are summed
    // from these values in memory, never from a column that would round them.
    if (!Number.isSafeInteger(line.amount) || line.amount < 0) {
      throw new Error(`a statement line's amount must be satang, got ${line.amount}`)
    }
    const lineKey = [
      line.lineAt.toISOString(),
      line.direction,
      line.amount,
      line.reference ?? '',
      line.description,
    ].join('|')
    const occurrence = (this.#seen.get(lineKey) ?? 0) + 1
    this.#seen.set(lineKey, occurrence)
    return [
      this.accountId,
      this.importId,
      hash('sha256', `${this.accountId}|${lineKey}|${occurrence}`, 'hex'),
      line.lineAt,
      line.direction,
      line.amount,
      line.reference,
      line.transRef ?? line.reference,
      transferKey(this.accountId, line),
      line.balanceAfter ?? null,
      line.description,
      'new',
      null,
      new Date(),
    ]
  }
}

/**
 * A file that prints balances opens where the account's stored statements
 * closed (`assertContinues`), unless its earliest line is one already stored
 * (an overlapping export): the chain inside the file then carries on from it.
 */
async function assertOpeningContinues(
  trx: TransactionClientContract,
  accountId: number,
  importId: number,
  chain: BalanceChain
) {
  const opening = chain.opening()
  if (!opening) return
  const key = transferKey(accountId, opening.line)
  const known =
    key &&
    (await trx
      .from('statement_lines')
      .where('transfer_key', key)
      // On this account: a transfer on another account's statement continues nothing here.
      .where('deposit_account_id', accountId)
      .whereNot('import_id', importId)
      .whereNot('status', 'discarded')
      .first())
  if (known) return
  const stored = () =>
    trx
      .from('statement_lines')
      .where('deposit_account_id', accountId)
      .whereNot('import_id', importId)
      // A file turned down says nothing of the account; one awaiting confirmation is where it stands.
      .whereNot('status', 'discarded')
      .whereNotNull('balance_after')
  const latest = await stored()
    .where('line_at', '<=', opening.line.lineAt)
    .max('line_at as at')
    .first()
  if (!latest?.at) return assertContinues(opening, undefined)
  // The lines of the account's last minute before the file: a bank that prints
  // minutes only, newest first, stores them in reverse, so the one the file
  // follows is whichever of them closes at the file's opening balance.
  const lastMinute = await stored()
    .where('line_at', latest.at)
    .orderBy('id', 'desc')
    .select('balance_after', 'line_at')
  const follows = lastMinute.find((row) => Number(row.balance_after) === opening.balance)
  const last = follows ?? lastMinute[0]
  assertContinues(opening, {
    balanceAfter: Number(last.balance_after),
    lineAt: new Date(last.line_at),
  })
}

/**
 * A transfer the file shows that is already on another account's statement
 * is not this account's: the IGNORE above skipped it, and the file is
 * refused, naming the account and the line, instead of being imported
 * without it. Read with a lock, after the INSERT: a concurrent import of the
 * other account has committed by then (the duplicate key waited for it), so
 * two imports of one transfer at once cannot both miss each other.
 */
async function refuseOtherAccountsTransfers(
  trx: TransactionClientContract,
  accountId: number,
  rows: Array<Array<string | number | Date | null>>,
  columns: string[]
) {
  const keyAt = columns.indexOf('transfer_key')
  const keys = rows.map((values) => values[keyAt]).filter((key) => typeof key === 'string')
  if (keys.length === 0) return
  const elsewhere = await trx
    .from('statement_lines as l')
    .join('deposit_accounts as a', 'a.id', 'l.deposit_account_id')
    .whereIn('l.transfer_key', keys as string[])
    .whereNot('l.deposit_account_id', accountId)
    .orderBy('l.id')
    .forShare()
    .select('l.id', 'l.import_id', 'l.transfer_key', 'a.id as account_id', 'a.bank', 'a.account_no')
    .first()
  if (!elsewhere) return
  const values = rows.find((row) => row[keyAt] === elsewhere.transfer_key)!
  const amount = Number(values[columns.indexOf('amount')])
  const ref = String(values[columns.indexOf('trans_ref')] ?? '')
  throw new StatementFormatError(
    `the ${values[columns.indexOf('direction')]} of ${formatThb(amount)} THB (bank reference ${ref}) ` +
      `is already on the statement of deposit account ${elsewhere.account_id} (${elsewhere.bank} ${elsewhere.account_no}), ` +
      `line #${elsewhere.id} of import ${elsewhere.import_id}: this file is not this account's, or the line is`
  )
}

/**
 * What the bank says identifies a transfer (statement_lines.transfer_key,
 * unique across accounts): its transaction reference, with the direction
 * (a transfer between two of the gateway's accounts is a debit on one and a
 * credit on the other); or, where the statement prints a running balance,
 * the account, direction, amount and balance at the bank's minute (a
 * re-export that drops the seconds is the same transfer). Null when the
 * bank says neither: the line is then known by its fingerprint in its file.
 * Never our own formatting: the description and the seconds are left out.
 */
export function transferKey(accountId: number, line: ParsedStatementLine): string | null {
  if (line.transRef) return `ref|${line.direction}|${line.transRef}`
  if (line.balanceAfter === null || line.balanceAfter === undefined) return null
  const minute = line.lineAt.toISOString().slice(0, 16)
  return `bal|${accountId}|${line.direction}|${line.amount}|${line.balanceAfter}|${minute}`
}

/**
 * The money the import's new lines say the account received and sent, in
 * the import's transaction: one bank posting per bank day (GMT+7) of its
 * lines, so the ledger's bank account is the sum of its statement lines,
 * account by account and day by day. A line already known belongs to the
 * import that added it and is not counted again.
 */
export async function postBankDays(
  trx: TransactionClientContract,
  accountId: number,
  importId: number
) {
  const [days] = await trx.rawQuery(
    `SELECT ${gatewayDaySql('line_at')} AS day,
            SUM(CASE WHEN direction = 'credit' THEN amount ELSE 0 END) AS credits,
            SUM(CASE WHEN direction = 'debit' THEN amount ELSE 0 END) AS debits
       FROM statement_lines WHERE import_id = ? GROUP BY day ORDER BY day`,
    [importId]
  )
  await postBankDayTotals(
    trx,
    accountId,
    importId,
    (days as Array<{ day: string; credits: string; debits: string }>).map((row) => ({
      day: row.day,
      credits: Number(row.credits),
      debits: Number(row.debits),
    }))
  )
}

/** The bank postings of an import's lines, from their totals by bank day (oldest first). */
async function postBankDayTotals(
  trx: TransactionClientContract,
  accountId: number,
  importId: number,
  days: Array<{ day: string; credits: number; debits: number }>
) {
  const postings = days
    .map((row) =>
      bankStatementPosting({
        depositAccountId: accountId,
        importId,
        day: row.day,
        credits: row.credits,
        debits: row.debits,
      })
    )
    .filter((posting) => posting !== null)
  await postLedgerTransactions(trx, postings)
}

/**
 * Matches the lines an import stored, after it committed, then the lines an
 * earlier import of the account stored but did not get to match (it stopped
 * half-way). Lines are read in batches in id order; each batch's candidate
 * orders are read once (`findCandidates`) and every line judged in memory
 * by the matcher's rules (`judgeLine`). A line no order can claim gets its
 * verdict (`unmatched`, or `late` for an expired order) in one UPDATE per
 * batch; the others are settled as `matchLines` settles them, a
 * transaction per `linesPerTransaction` lines that locks them and their
 * orders and judges them again on the locked rows.
 *
 * With `judged` (the import's lines were judged as they were stored,
 * `storeStatement` with judge), the import's lines still new are the ones
 * whose verdict rests on an order or a payout: they go to the locked
 * judgement straight away, without being judged unlocked a second time
 * (which would settle none of them).
 */
export async function matchImport(
  accountId: number,
  importId: number,
  options: { judged?: boolean } = {}
) {
  const results: Record<MatchResult, number> = { matched: 0, unmatched: 0, late: 0, skipped: 0 }
  await matchNewLines(
    (query) => query.where('deposit_account_id', accountId).where('import_id', importId),
    results,
    { judged: options.judged ?? false }
  )
  await matchNewLines(
    (query) => query.where('deposit_account_id', accountId).where('import_id', '<', importId),
    results,
    { judged: false }
  )
  return results
}

async function matchNewLines(
  scope: (query: DatabaseQueryBuilderContract) => DatabaseQueryBuilderContract,
  results: Record<MatchResult, number>,
  options: { judged: boolean }
) {
  const pages = newLinePages(scope)
  if (options.judged) {
    await settleInTurn(lineChunks(pages), results)
    return
  }
  for await (const lines of pages) await matchBatch(lines, results)
}

/** The new lines in scope, `statementBatching.lines` at a time, in id order. */
async function* newLinePages(
  scope: (query: DatabaseQueryBuilderContract) => DatabaseQueryBuilderContract
) {
  for (let after = 0; ;) {
    const rows = await scope(db.from('statement_lines'))
      .where('status', 'new')
      .where('id', '>', after)
      .orderBy('id')
      .limit(statementBatching.lines)
      .select(LINE_COLUMNS)
    if (rows.length === 0) return
    const lines = rows.map(toLineRow)
    after = lines[lines.length - 1].id
    yield lines
  }
}

/** The ids of the pages' lines, `statementBatching.linesPerTransaction` at a time. */
async function* lineChunks(pages: AsyncIterable<LineRow[]>) {
  const size = statementBatching.linesPerTransaction
  for await (const lines of pages) {
    for (let start = 0; start < lines.length; start += size) {
      yield lines.slice(start, start + size).map((line) => line.id)
    }
  }
}

/**
 * Settles chunks of lines in id order, a transaction each (`settleLines`,
 * read committed), `statementBatching.transactionsAtOnce` at a time: a
 * chunk's transaction begins once the one before holds its lines and every
 * order they could claim, then reads, locks, judges and marks its own lines
 * while the ones before pay their orders and commit. A line of a later
 * chunk that could claim an order of an earlier one waits for that commit
 * and finds the order as it left it, as if the chunks ran one after the
 * other: an order goes to the earliest line that can pay it.
 */
async function settleInTurn(chunks: AsyncIterable<number[]>, results: Record<MatchResult, number>) {
  const failures: unknown[] = []
  const settle = (lineIds: number[]) => {
    let locked!: () => void
    const holding = new Promise<void>((resolve) => (locked = resolve))
    const done = inTransaction((trx) => settleLines(trx, lineIds, { locked }), {
      isolationLevel: 'read committed',
    }).then(
      (settled) => {
        for (const result of settled.values()) results[result]++
      },
      (error) => {
        failures.push(error)
      }
    )
    // Done without locking (every line settled by someone else meanwhile), or failed.
    return { holding: Promise.race([holding, done]), done }
  }
  const running: Array<ReturnType<typeof settle>> = []
  for await (const lineIds of chunks) {
    const latest = running.at(-1)
    if (latest) await latest.holding
    while (running.length >= statementBatching.transactionsAtOnce) await running.shift()!.done
    if (failures.length > 0) break
    running.push(settle(lineIds))
  }
  for (const transaction of running) await transaction.done
  if (failures.length > 0) throw failures[0]
}

async function matchBatch(lines: LineRow[], results: Record<MatchResult, number>) {
  const candidates = await findCandidates(db.connection(), lines, { lock: false })
  const unmatched: Array<{ id: number; status: 'unmatched'; note: string }> = []
  const late: Array<{ id: number; status: 'late'; note: string }> = []
  const toSettle: number[] = []
  for (const line of lines) {
    const verdict = verdictWithoutOrder(line, judgeLine(line, candidates))
    // Decided on an order's state (or a payout's): judged again with it locked.
    if (!verdict) toSettle.push(line.id)
    else if (verdict.status === 'late')
      late.push({ id: line.id, status: 'late', note: verdict.note })
    else unmatched.push({ id: line.id, status: 'unmatched', note: verdict.note })
  }
  await settleBatch(unmatched, late, toSettle, results)
}

/**
 * One transaction per `linesPerTransaction` lines to settle; the first
 * also gives the other lines their verdicts (a commit is the costly part).
 */
async function settleBatch(
  unmatched: Array<{ id: number; status: 'unmatched'; note: string }>,
  late: Array<{ id: number; status: 'late'; note: string }>,
  toSettle: number[],
  results: Record<MatchResult, number>
) {
  const size = statementBatching.linesPerTransaction
  for (let start = 0; start === 0 || start < toSettle.length; start += size) {
    const chunk = toSettle.slice(start, start + size)
    const counts = await inTransaction(
      async (trx) => {
        const judged =
          start === 0
            ? { unmatched: await setLines(trx, unmatched), late: await setLines(trx, late) }
            : { unmatched: 0, late: 0 }
        return { judged, settled: chunk.length > 0 ? await settleLines(trx, chunk) : new Map() }
      },
      { isolationLevel: 'read committed' }
    )
    results.unmatched += counts.judged.unmatched
    results.late += counts.judged.late
    // A late line judged by another importer meanwhile.
    if (start === 0) results.skipped += late.length - counts.judged.late
    for (const result of counts.settled.values()) results[result as MatchResult]++
  }
}

/**
 * The verdict the rules gave a line without any order's or payout's state
 * (no order claims it, a debit without a payout reference, a payment for an
 * expired order): final as it is. Null when the judgement rests on an order
 * or a payout, which is judged again with them locked (`settleLines`).
 */
function verdictWithoutOrder(line: LineRow, judgement: Judgement<RuleOrder>) {
  if (judgement.result === 'matched' || isPayoutReference(line.reference) || judgement.order) {
    return null
  }
  return { status: judgement.result, note: judgement.note }
}

/**
 * Judges a batch of rows about to be stored (`storeStatement` with judge):
 * the rows a verdict without an order settles get it (status and note) in
 * place; returns how many got each. The candidates are read unlocked, as
 * `matchImport` reads them.
 */
async function judgeRows(
  client: QueryClientContract,
  accountId: number,
  rows: StoredLineValues[],
  columns: string[]
) {
  const at = (name: string) => columns.indexOf(name)
  const counts = { unmatched: 0, late: 0 }
  // Not stored yet: the row's place in the batch stands in for its id.
  const lines: LineRow[] = rows.map((values, index) => ({
    id: index + 1,
    deposit_account_id: accountId,
    line_at: values[at('line_at')] as Date,
    direction: values[at('direction')] as LineRow['direction'],
    amount: values[at('amount')] as number,
    reference: values[at('reference')] as string | null,
    trans_ref: values[at('trans_ref')] as string | null,
    status: 'new',
  }))
  const candidates = await findCandidates(client, lines, { lock: false })
  for (const [index, line] of lines.entries()) {
    const verdict = verdictWithoutOrder(line, judgeLine(line, candidates))
    if (!verdict) continue
    rows[index][at('status')] = verdict.status
    rows[index][at('note')] = verdict.note.slice(0, 255)
    counts[verdict.status]++
  }
  return counts
}
