import { DateTime } from 'luxon'
import {
  accountReconciliation,
  isBankDay,
  shiftBankDay,
  type AccountDay,
  type AccountReceivable,
  type Figure,
} from '#admin/queries/reconciliation_page'
import { depositAccountChoices } from '#admin/queries/statements'
import {
  lastReconciliationRun,
  type Problem,
  type ReconciliationResult,
} from '#reconciliation/verify/index'
import { formatThb } from '#core/money'
import { ageClass, ageLabel } from '#review/queues'
import { formatGatewayDateTime, gatewayDay } from '#core/clock'

/**
 * The reconciliation page as it shows: one deposit account's bank days (the
 * statement against the ledger's bank account, the credits claimed and
 * unclaimed, receivables opened and cleared) with their totals, its open
 * items and exceptions, and the last whole-database check.
 */

/** Bank days per page of the table. */
export const DAYS_PER_PAGE = 14
/** Days shown by default: today and the 6 before it. */
const DEFAULT_DAYS = 7
/** The longest range one view takes. */
const MAX_DAYS = 366

export interface ReconciliationFilters {
  account: number | null
  from: string
  to: string
  page: number
}

/**
 * The page's deposit account (default: the first of the list), bank days
 * `from`–`to` (default: the last 7, GMT+7) and page, from the query string.
 */
export function readFilters(
  qs: Record<string, unknown>,
  accountIds: number[],
  now = new Date()
): ReconciliationFilters {
  const today = gatewayDay(now)
  let to = isBankDay(qs.to) ? qs.to : today
  let from = isBankDay(qs.from) ? qs.from : shiftBankDay(to, -(DEFAULT_DAYS - 1))
  if (from > to) [from, to] = [to, from]
  if (shiftBankDay(from, MAX_DAYS - 1) < to) from = shiftBankDay(to, -(MAX_DAYS - 1))
  const asked = Number(qs.account)
  const account = accountIds.includes(asked) ? asked : (accountIds[0] ?? null)
  return { account, from, to, page: Math.max(1, Math.floor(Number(qs.page)) || 1) }
}

function queryString(filters: ReconciliationFilters, page?: number) {
  return new URLSearchParams({
    ...(filters.account === null ? {} : { account: String(filters.account) }),
    from: filters.from,
    to: filters.to,
    ...(page && page > 1 ? { page: String(page) } : {}),
  }).toString()
}

/** The page's query string for the account and days of `input` (the check's form sends them back). */
export async function reconciliationQuery(input: Record<string, unknown>) {
  const accounts = (await depositAccountChoices()).map((choice) => Number(choice.value))
  return queryString(readFilters(input, accounts))
}

const count = (value: number) => value.toLocaleString('en-US')
/** "1 line", "12 lines". */
const counted = (value: number, noun: string) => `${count(value)} ${noun}${value === 1 ? '' : 's'}`
const figure = (value: Figure, noun: string) => ({
  count: counted(value.count, noun),
  amount: formatThb(value.amount),
  none: value.count === 0,
})

function presentDay(day: AccountDay, today: string) {
  return {
    day: day.day,
    label: DateTime.fromISO(day.day).toFormat('ccc d LLL yyyy'),
    today: day.day === today,
    credits: formatThb(day.credits),
    creditLines: counted(day.creditLines, 'line'),
    debits: formatThb(day.debits),
    debitLines: counted(day.debitLines, 'line'),
    net: formatThb(day.credits - day.debits),
    ledger: formatThb(day.ledgerNet),
    difference: formatThb(day.difference),
    drift: day.difference !== 0,
    claimed: figure(day.claimed, 'line'),
    unclaimed: figure(day.unclaimed, 'line'),
    opened: figure(day.receivablesOpened, 'payment'),
    cleared: figure(day.receivablesCleared, 'payment'),
  }
}

function presentProblem(problem: Problem) {
  return { kind: problem.kind, detail: problem.detail, day: problem.day ?? null }
}

type LastRun = Awaited<ReturnType<typeof lastReconciliationRun>>

/** The last whole-database check: its problems for this account, and those no account owns. */
function presentLastRun(last: LastRun, account: number | null) {
  if (!last) return null
  const problems = (last.result?.problems ?? []) as Problem[]
  return {
    ok: last.ok,
    problems: last.problems,
    actor: last.actor,
    at: formatGatewayDateTime(last.at),
    age: ageLabel(last.at),
    // Its problems for this account, and those no account owns (the clearing accounts…).
    forAccount: problems
      .filter((problem) => problem.depositAccountId === account)
      .map(presentProblem),
    general: problems
      .filter(
        (problem) => problem.depositAccountId === undefined || problem.depositAccountId === null
      )
      .map(presentProblem),
  }
}

/** The days' totals, as the table's last row. */
function presentTotals(days: AccountDay[]) {
  const total = (pick: (day: AccountDay) => number) => days.reduce((sum, day) => sum + pick(day), 0)
  const totalFigure = (pick: (day: AccountDay) => Figure, noun: string) =>
    figure(
      { count: total((day) => pick(day).count), amount: total((day) => pick(day).amount) },
      noun
    )
  return {
    credits: formatThb(total((day) => day.credits)),
    creditLines: counted(
      total((day) => day.creditLines),
      'line'
    ),
    debits: formatThb(total((day) => day.debits)),
    debitLines: counted(
      total((day) => day.debitLines),
      'line'
    ),
    net: formatThb(total((day) => day.credits - day.debits)),
    ledger: formatThb(total((day) => day.ledgerNet)),
    difference: formatThb(total((day) => day.difference)),
    drift: days.some((day) => day.difference !== 0),
    claimed: totalFigure((day) => day.claimed, 'line'),
    unclaimed: totalFigure((day) => day.unclaimed, 'line'),
    opened: totalFigure((day) => day.receivablesOpened, 'payment'),
    cleared: totalFigure((day) => day.receivablesCleared, 'payment'),
  }
}

function presentReceivable(item: AccountReceivable) {
  return {
    claimId: item.claimId,
    platformOrderId: item.platformOrderId,
    merchantId: item.merchantId,
    merchantName: item.merchantName,
    orderStatus: item.orderStatus,
    amount: formatThb(item.amount),
    claimedAt: formatGatewayDateTime(item.claimedAt),
    age: ageLabel(item.claimedAt),
    ageClass: item.stale ? 'age-old' : ageClass(item.claimedAt),
    stale: item.stale,
    path: item.path,
    actor: item.actor,
    approvalRequestId: item.approvalRequestId,
  }
}

/** The range's bank days, newest first, and the page of them shown. */
function pageOfDays(filters: ReconciliationFilters) {
  const allDays: string[] = []
  for (let day = filters.to; day >= filters.from; day = shiftBankDay(day, -1)) allDays.push(day)
  const lastPage = Math.max(1, Math.ceil(allDays.length / DAYS_PER_PAGE))
  const currentPage = Math.min(filters.page, lastPage)
  const shown = allDays.slice((currentPage - 1) * DAYS_PER_PAGE, currentPage * DAYS_PER_PAGE)
  return {
    range: { days: allDays.length, shownFrom: shown[shown.length - 1], shownTo: shown[0] },
    page: { currentPage, lastPage, total: allDays.length },
  }
}

/**
 * The whole page for the query string: the account's days, one page of them
 * at a time (newest first), with the last check; without a deposit account,
 * only the filters and the last check.
 */
export async function reconciliationPage(qs: Record<string, unknown>) {
  const accounts = await depositAccountChoices()
  const filters = readFilters(
    qs,
    accounts.map((choice) => Number(choice.value))
  )
  const lastRun = presentLastRun(await lastReconciliationRun(), filters.account)
  const base = { accounts, filters, lastRun, daysPerPage: DAYS_PER_PAGE }
  if (filters.account === null) return base

  const { range, page } = pageOfDays(filters)
  const now = new Date()
  const data = await accountReconciliation({
    depositAccountId: filters.account,
    from: range.shownFrom,
    to: range.shownTo,
    now,
  })
  const today = gatewayDay(now)
  const days = [...data.days].reverse()
  return {
    ...base,
    account: accounts.find((choice) => Number(choice.value) === filters.account),
    days: days.map((day) => presentDay(day, today)),
    totals: presentTotals(days),
    range,
    page,
    pageQuery: (to: number) => queryString(filters, to),
    receivables: data.openReceivables.map(presentReceivable),
    receivablesTotal: formatThb(data.openReceivables.reduce((sum, item) => sum + item.amount, 0)),
    staleCount: data.openReceivables.filter((item) => item.stale).length,
    unclaimed: { lines: count(data.unclaimed.lines), amount: formatThb(data.unclaimed.amount) },
    problems: data.problems.map(presentProblem),
    windowHours: data.windowHours,
  }
}

/** What the operator is told after running the whole-database check. */
export function reconciliationCheckNotice(
  result: ReconciliationResult,
  kinds: Record<string, number>
): { tone: 'success' | 'error'; message: string } {
  const receivables = result.openReceivables.length
  const summary = `${receivables} open receivable${receivables === 1 ? '' : 's'}, ${result.unclaimed.lines} unclaimed credit line${result.unclaimed.lines === 1 ? '' : 's'}`
  if (result.ok) {
    return {
      tone: 'success',
      message: `Reconciliation check: ok, the ledger agrees with the bank statements (${summary}).`,
    }
  }
  const n = result.problems.length
  return {
    tone: 'error',
    message: `Reconciliation check: ${n} problem${n === 1 ? '' : 's'} (${Object.entries(kinds)
      .map(([kind, total]) => `${kind} ${total}`)
      .join(', ')}), listed under the last whole-database check.`,
  }
}
