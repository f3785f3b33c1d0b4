import db from '@adonisjs/lucid/services/db'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import { gatewayDay, gatewayDaySql } from '#core/clock'
import {
  bankDayStart,
  checkReconciliation,
  type BankDay,
  type OpenReceivableItem,
  type Problem,
} from '#reconciliation/verify/index'
import {
  receivableAge,
  receivableWindowHours,
  receivableWindowStart,
} from '#reconciliation/receivable_window'

/**
 * The reconciliation page's figures (docs/operations.md, "Reconciliation"):
 * `reconcile:verify`'s check (app/reconciliation/verify/index.ts,
 * checkReconciliation) scoped to ONE deposit account and a range of bank
 * days, plus what makes each day up for the operator (lines, the claims
 * that take them, receivables opened and cleared), in one consistent
 * snapshot. A range of days reads that range through statement_lines'
 * index starting with line_at, not the account's history, so the page
 * stays fast however large the tables grow.
 */

const HOUR_MS = 3_600_000
const DAY_MS = 86_400_000

/**
 * A cleared receivable is found through the line that cleared it: a line of
 * the account whose bank time is at most this long before the first day
 * shown or after the last (a transfer is made around the time it is credited).
 */
const CLEARED_LINE_MARGIN_MS = 2 * DAY_MS

/**
 * A claim that was a receivable and is cleared: its line came after it. A
 * claim written with its line has cleared_at = claimed_at
 * (app/reconciliation/receipts.ts); a receivable gets cleared_at when a
 * line clears it.
 */
const CLEARED_RECEIVABLE = 'c.cleared_at > c.claimed_at'

/**
 * The lines of a range of days are read through statement_lines' index
 * starting with line_at (migration …055): its cost is the range's lines, not
 * the account's history, which the optimizer would otherwise pick while the
 * history is short (its unique (deposit_account_id, fingerprint) key).
 */
const BY_TIME = 'FORCE INDEX (statement_lines_match_rate_index)'

const sum = (value: unknown) => Number(value ?? 0)

/** The bank day `days` after `day` (negative: before). */
export function shiftBankDay(day: string, days: number) {
  return gatewayDay(new Date(bankDayStart(day).getTime() + days * DAY_MS))
}

/** `YYYY-MM-DD` that is a real calendar day. */
export function isBankDay(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    /^\d{4}-\d{2}-\d{2}$/.test(value) &&
    !Number.isNaN(bankDayStart(value).getTime()) &&
    gatewayDay(bankDayStart(value)) === value
  )
}

export interface Figure {
  count: number
  amount: number
}

/** One bank day of one deposit account: BankDay (what verify compares) and what makes it up. */
export interface AccountDay extends BankDay {
  creditLines: number
  debitLines: number
  /** ledgerNet − (credits − debits): not zero is verify's bank_day_drift. */
  difference: number
  /** Credit lines of the day a claim takes, and those none takes (verify's unclaimed). */
  claimed: Figure
  unclaimed: Figure
  /** Payments credited that day before their bank line (receivables opened: open, cleared or reversed since). */
  receivablesOpened: Figure
  /** Receivables the day's lines cleared. */
  receivablesCleared: Figure
}

export interface AccountReceivable extends OpenReceivableItem {
  merchantId: string | null
  merchantName: string | null
  orderStatus: string | null
  path: string
  actor: string
  approvalRequestId: number | null
  slipId: number | null
  transRef: string | null
}

export interface AccountReconciliation {
  depositAccountId: number
  /** The days asked for, oldest first, each with its figures (zero when nothing happened). */
  days: AccountDay[]
  /** Every open receivable of the account (not cleared, not reversed), the oldest first. */
  openReceivables: AccountReceivable[]
  /** Credit lines of the account no claim takes and no decision took yet (new, unmatched, late). */
  unclaimed: { lines: number; amount: number }
  /** verify's problems for this account, for the days shown and its open items. */
  problems: Problem[]
  windowHours: number
}

/**
 * verify's figures for one deposit account and the bank days `from` to `to`
 * (inclusive, `YYYY-MM-DD` in GMT+7), with its open items and problems.
 */
export async function accountReconciliation(options: {
  depositAccountId: number
  from: string
  to: string
  now?: Date
  windowHours?: number
}): Promise<AccountReconciliation> {
  const now = options.now ?? new Date()
  const windowHours = receivableWindowHours(options.windowHours)
  return db.transaction(
    (trx) =>
      readAccount(trx, {
        depositAccountId: options.depositAccountId,
        from: options.from,
        to: options.to,
        now,
        windowHours,
      }),
    { isolationLevel: 'repeatable read' }
  )
}

async function readAccount(
  trx: TransactionClientContract,
  options: { depositAccountId: number; from: string; to: string; now: Date; windowHours: number }
): Promise<AccountReconciliation> {
  const { depositAccountId: accountId, now, windowHours } = options
  const start = bankDayStart(options.from)
  const end = bankDayStart(shiftBankDay(options.to, 1))

  // verify's rules, for this account and these days, in this snapshot.
  const checked = await checkReconciliation(trx, {
    now,
    windowHours,
    scope: { depositAccountId: accountId, from: options.from, to: options.to },
  })
  const checkedDays = new Map(checked.days.map((day) => [day.day, day]))

  const days: AccountDay[] = []
  const byDay = new Map<string, AccountDay>()
  for (let day = options.from; day <= options.to; day = shiftBankDay(day, 1)) {
    const found = checkedDays.get(day)
    const entry: AccountDay = {
      depositAccountId: accountId,
      day,
      credits: found?.credits ?? 0,
      debits: found?.debits ?? 0,
      ledgerNet: found?.ledgerNet ?? 0,
      creditLines: 0,
      debitLines: 0,
      difference: (found?.ledgerNet ?? 0) - ((found?.credits ?? 0) - (found?.debits ?? 0)),
      claimed: { count: 0, amount: 0 },
      unclaimed: { count: 0, amount: 0 },
      receivablesOpened: { count: 0, amount: 0 },
      receivablesCleared: { count: 0, amount: 0 },
    }
    days.push(entry)
    byDay.set(day, entry)
  }

  // What makes the days up (display only): lines, and the claims that take them.
  const [lineDays] = await trx.rawQuery(
    `SELECT ${gatewayDaySql('l.line_at')} AS day,
            COALESCE(SUM(l.direction = 'credit'), 0) AS credit_lines,
            COALESCE(SUM(l.direction = 'debit'), 0) AS debit_lines,
            COALESCE(SUM(l.direction = 'credit' AND c.id IS NOT NULL), 0) AS claimed_lines,
            COALESCE(SUM(IF(l.direction = 'credit' AND c.id IS NOT NULL, l.amount, 0)), 0) AS claimed,
            COALESCE(SUM(l.direction = 'credit' AND c.id IS NULL), 0) AS unclaimed_lines,
            COALESCE(SUM(IF(l.direction = 'credit' AND c.id IS NULL, l.amount, 0)), 0) AS unclaimed,
            COALESCE(SUM(${CLEARED_RECEIVABLE}), 0) AS cleared,
            COALESCE(SUM(IF(${CLEARED_RECEIVABLE}, c.expected_amount, 0)), 0) AS cleared_amount
       FROM statement_lines l ${BY_TIME}
       LEFT JOIN receipt_claims c ON c.statement_line_id = l.id
      WHERE l.line_at >= ? AND l.line_at < ? AND l.deposit_account_id = ?
      GROUP BY day`,
    [start, end, accountId]
  )
  for (const row of lineDays) {
    const entry = byDay.get(row.day)
    if (!entry) continue
    entry.creditLines = sum(row.credit_lines)
    entry.debitLines = sum(row.debit_lines)
    entry.claimed = { count: sum(row.claimed_lines), amount: sum(row.claimed) }
    entry.unclaimed = { count: sum(row.unclaimed_lines), amount: sum(row.unclaimed) }
    entry.receivablesCleared = { count: sum(row.cleared), amount: sum(row.cleared_amount) }
  }

  // Receivables without a line: open (verify's, with who credited them), or
  // reversed by an operator, which were opened all the same.
  const receivables = await trx
    .from('receipt_claims as c')
    .leftJoin('payment_orders as o', 'o.id', 'c.payment_order_id')
    .leftJoin('merchants as m', 'm.id', 'o.merchant_id')
    .where('c.deposit_account_id', accountId)
    .whereNull('c.statement_line_id')
    .orderBy('c.claimed_at')
    .orderBy('c.id')
    .select(
      'c.id',
      'c.deposit_account_id',
      'c.expected_amount',
      'c.claimed_at',
      'c.reversed_at',
      'c.path',
      'c.actor',
      'c.approval_request_id',
      'c.slip_id',
      'c.trans_ref',
      'o.platform_order_id',
      'o.status as order_status',
      'm.merchant_id',
      'm.name as merchant_name'
    )
  const open = new Set(checked.openReceivables.map((item) => item.claimId))
  const openReceivables: AccountReceivable[] = []
  for (const row of receivables) {
    const item = toReceivable(row, now, windowHours)
    const entry = byDay.get(gatewayDay(item.claimedAt))
    if (entry) {
      entry.receivablesOpened.count += 1
      entry.receivablesOpened.amount += item.amount
    }
    if (open.has(item.claimId)) openReceivables.push(item)
  }
  // The days' receivables cleared since: through the line that cleared them.
  const [cleared] = await trx.rawQuery(
    `SELECT ${gatewayDaySql('c.claimed_at')} AS day, COUNT(*) AS opened, SUM(c.expected_amount) AS amount
       FROM statement_lines l ${BY_TIME}
       JOIN receipt_claims c ON c.statement_line_id = l.id
      WHERE l.line_at >= ? AND l.line_at < ? AND l.deposit_account_id = ?
        AND ${CLEARED_RECEIVABLE} AND c.claimed_at >= ? AND c.claimed_at < ?
      GROUP BY day`,
    [
      new Date(start.getTime() - CLEARED_LINE_MARGIN_MS),
      new Date(end.getTime() + CLEARED_LINE_MARGIN_MS),
      accountId,
      start,
      end,
    ]
  )
  for (const row of cleared) {
    const entry = byDay.get(row.day)
    if (!entry) continue
    entry.receivablesOpened.count += sum(row.opened)
    entry.receivablesOpened.amount += sum(row.amount)
  }

  return {
    depositAccountId: accountId,
    days,
    openReceivables,
    unclaimed: checked.unclaimed,
    problems: checked.problems,
    windowHours,
  }
}

function toReceivable(row: Record<string, any>, now: Date, windowHours: number): AccountReceivable {
  const claimedAt = new Date(row.claimed_at)
  return {
    claimId: Number(row.id),
    depositAccountId: Number(row.deposit_account_id),
    platformOrderId: row.platform_order_id ?? null,
    amount: sum(row.expected_amount),
    claimedAt,
    // verify's rule (receivable_window.ts): past the window once older than it.
    ...receivableAge(claimedAt, now, windowHours),
    merchantId: row.merchant_id ?? null,
    merchantName: row.merchant_name ?? null,
    orderStatus: row.order_status ?? null,
    path: String(row.path),
    actor: String(row.actor),
    approvalRequestId: row.approval_request_id === null ? null : Number(row.approval_request_id),
    slipId: row.slip_id === null ? null : Number(row.slip_id),
    transRef: row.trans_ref ?? null,
  }
}

/**
 * Every open receivable, for the review queue: the oldest first, a page at
 * a time (receipt_claims' unique statement_line_id index holds them under NULL).
 */
export async function openReceivablesQueue(
  options: { page: number; perPage: number; now?: Date; windowHours?: number } = {
    page: 1,
    perPage: 25,
  }
) {
  const now = options.now ?? new Date()
  const windowHours = receivableWindowHours(options.windowHours)
  const result = await db
    .from('receipt_claims as c')
    .join('deposit_accounts as a', 'a.id', 'c.deposit_account_id')
    .leftJoin('payment_orders as o', 'o.id', 'c.payment_order_id')
    .leftJoin('merchants as m', 'm.id', 'o.merchant_id')
    .whereNull('c.statement_line_id')
    .whereNull('c.reversed_at')
    .orderBy('c.claimed_at')
    .orderBy('c.id')
    .select(
      'c.id',
      'c.deposit_account_id',
      'c.expected_amount',
      'c.claimed_at',
      'c.path',
      'c.actor',
      'c.approval_request_id',
      'c.slip_id',
      'c.trans_ref',
      'o.platform_order_id',
      'o.status as order_status',
      'm.merchant_id',
      'm.name as merchant_name',
      'a.bank',
      'a.account_no',
      'a.account_name'
    )
    .paginate(options.page, options.perPage)
  return {
    page: result,
    windowHours,
    rows: result.all().map((row) => ({
      ...toReceivable(row, now, windowHours),
      account: `${row.bank} ${row.account_no}`,
      accountName: String(row.account_name ?? ''),
    })),
  }
}

export interface ReceivablesSummary {
  /** Open receivables: payments credited whose bank line has not arrived. */
  open: number
  amount: number
  /** When the oldest was credited, and its age in hours (null: none open). */
  oldestAt: Date | null
  oldestHours: number | null
  /** How many are past the window (verify's stale_receivable). */
  stale: number
  windowHours: number
}

/** The open receivables in four figures: the dashboard's card and the queue's tab count. */
export async function openReceivablesSummary(
  options: { now?: Date; windowHours?: number; merchantIds?: number[] | null } = {}
): Promise<ReceivablesSummary> {
  const now = options.now ?? new Date()
  const windowHours = receivableWindowHours(options.windowHours)
  // The dashboard's platform or merchant filter; an empty list covers nothing.
  const merchantIds = options.merchantIds ?? null
  const onlyMerchants =
    merchantIds === null
      ? ''
      : merchantIds.length === 0
        ? ' AND 1 = 0'
        : ` AND merchant_id IN (${merchantIds.map(() => '?').join(', ')})`
  const [[row]] = await db.rawQuery(
    `SELECT COUNT(*) AS open_count, COALESCE(SUM(expected_amount), 0) AS amount,
            MIN(claimed_at) AS oldest, COALESCE(SUM(claimed_at < ?), 0) AS stale
       FROM receipt_claims WHERE statement_line_id IS NULL AND reversed_at IS NULL${onlyMerchants}`,
    [receivableWindowStart(now, windowHours), ...(merchantIds ?? [])]
  )
  const oldestAt = row.oldest ? new Date(row.oldest) : null
  return {
    open: sum(row.open_count),
    amount: sum(row.amount),
    oldestAt,
    oldestHours: oldestAt ? (now.getTime() - oldestAt.getTime()) / HOUR_MS : null,
    stale: sum(row.stale),
    windowHours,
  }
}
