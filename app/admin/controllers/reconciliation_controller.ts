import type { HttpContext } from '@adonisjs/core/http'
import { DateTime } from 'luxon'
import {
  accountReconciliation,
  isBankDay,
  shiftBankDay,
  type AccountDay,
  type Figure,
} from '#admin/queries/reconciliation_page'
import { lastReconciliationRun, runReconciliationCheck, type Problem } from '#reconciliation/verify'
import { depositAccountChoices } from '#admin/queries/statements'
import { formatThb } from '#core/money'
import { ageClass, ageLabel } from '#review/queues'
import { operatorActor } from '#admin/operator_action'
import { recordAudit } from '#core/audit'
import { formatGatewayDateTime, gatewayDay } from '#core/clock'
import { inTransaction } from '#core/transaction'

/** Bank days per page of the table. */
export const DAYS_PER_PAGE = 14
/** Days shown by default: today and the 6 before it. */
const DEFAULT_DAYS = 7
/** The longest range one view takes. */
const MAX_DAYS = 366

interface Filters {
  account: number | null
  from: string
  to: string
  page: number
}

/**
 * The page's deposit account (default: the first of the list), bank days
 * `from`–`to` (default: the last 7, GMT+7) and page, from the query string.
 */
function readFilters(qs: Record<string, unknown>, accountIds: number[], now = new Date()): Filters {
  const today = gatewayDay(now)
  let to = isBankDay(qs.to) ? qs.to : today
  let from = isBankDay(qs.from) ? qs.from : shiftBankDay(to, -(DEFAULT_DAYS - 1))
  if (from > to) [from, to] = [to, from]
  if (shiftBankDay(from, MAX_DAYS - 1) < to) from = shiftBankDay(to, -(MAX_DAYS - 1))
  const asked = Number(qs.account)
  const account = accountIds.includes(asked) ? asked : (accountIds[0] ?? null)
  return { account, from, to, page: Math.max(1, Math.floor(Number(qs.page)) || 1) }
}

function queryString(filters: Filters, page?: number) {
  return new URLSearchParams({
    ...(filters.account === null ? {} : { account: String(filters.account) }),
    from: filters.from,
    to: filters.to,
    ...(page && page > 1 ? { page: String(page) } : {}),
  }).toString()
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

/**
 * Reconciliation: one deposit account's bank days (the statement against
 * the ledger's bank account, the credits claimed and unclaimed, receivables
 * opened and cleared), its open items and exceptions, and the last
 * whole-database check, which operators run again from here.
 */
export default class ReconciliationController {
  async index({ request, view }: HttpContext) {
    const accounts = await depositAccountChoices()
    const filters = readFilters(
      request.qs(),
      accounts.map((choice) => Number(choice.value))
    )
    const last = await lastReconciliationRun()
    const lastRun = last
      ? {
          ok: last.ok,
          problems: last.problems,
          actor: last.actor,
          at: formatGatewayDateTime(last.at),
          age: ageLabel(last.at),
          // Its problems for this account, and those no account owns (the clearing accounts…).
          forAccount: ((last.result?.problems ?? []) as Problem[])
            .filter((problem) => problem.depositAccountId === filters.account)
            .map(presentProblem),
          general: ((last.result?.problems ?? []) as Problem[])
            .filter(
              (problem) =>
                problem.depositAccountId === undefined || problem.depositAccountId === null
            )
            .map(presentProblem),
        }
      : null
    const base = {
      accounts,
      filters,
      lastRun,
      daysPerPage: DAYS_PER_PAGE,
    }
    if (filters.account === null) return view.render('admin/reconciliation/index', base)

    // Newest day first; one page of days is read at a time.
    const allDays: string[] = []
    for (let day = filters.to; day >= filters.from; day = shiftBankDay(day, -1)) allDays.push(day)
    const lastPage = Math.max(1, Math.ceil(allDays.length / DAYS_PER_PAGE))
    const pageNumber = Math.min(filters.page, lastPage)
    const shown = allDays.slice((pageNumber - 1) * DAYS_PER_PAGE, pageNumber * DAYS_PER_PAGE)
    const now = new Date()
    const data = await accountReconciliation({
      depositAccountId: filters.account,
      from: shown[shown.length - 1],
      to: shown[0],
      now,
    })
    const today = gatewayDay(now)
    const days = [...data.days].reverse()
    const total = (pick: (day: AccountDay) => number) =>
      days.reduce((sum, day) => sum + pick(day), 0)
    const totals = {
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
      claimed: figure(
        {
          count: total((day) => day.claimed.count),
          amount: total((day) => day.claimed.amount),
        },
        'line'
      ),
      unclaimed: figure(
        {
          count: total((day) => day.unclaimed.count),
          amount: total((day) => day.unclaimed.amount),
        },
        'line'
      ),
      opened: figure(
        {
          count: total((day) => day.receivablesOpened.count),
          amount: total((day) => day.receivablesOpened.amount),
        },
        'payment'
      ),
      cleared: figure(
        {
          count: total((day) => day.receivablesCleared.count),
          amount: total((day) => day.receivablesCleared.amount),
        },
        'payment'
      ),
    }
    const receivables = data.openReceivables.map((item) => ({
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
    }))
    return view.render('admin/reconciliation/index', {
      ...base,
      account: accounts.find((choice) => Number(choice.value) === filters.account),
      days: days.map((day) => presentDay(day, today)),
      totals,
      range: {
        days: allDays.length,
        shownFrom: shown[shown.length - 1],
        shownTo: shown[0],
      },
      page: {
        currentPage: pageNumber,
        lastPage,
        total: allDays.length,
      },
      pageQuery: (to: number) => queryString(filters, to),
      receivables,
      receivablesTotal: formatThb(data.openReceivables.reduce((sum, item) => sum + item.amount, 0)),
      staleCount: data.openReceivables.filter((item) => item.stale).length,
      unclaimed: { lines: count(data.unclaimed.lines), amount: formatThb(data.unclaimed.amount) },
      problems: data.problems.map(presentProblem),
      windowHours: data.windowHours,
    })
  }

  /**
   * Runs the whole-database check now (recorded in reconciliation_runs, with
   * the operator as actor), writes its audit row and says how it went.
   */
  async check(ctx: HttpContext) {
    const actor = operatorActor(ctx)
    const result = await runReconciliationCheck(actor)
    const kinds: Record<string, number> = {}
    for (const problem of result.problems) kinds[problem.kind] = (kinds[problem.kind] ?? 0) + 1
    const stale = result.openReceivables.filter((item) => item.stale).length
    await inTransaction((trx) =>
      recordAudit(trx, actor, {
        action: 'reconciliation.check',
        details: {
          ok: result.ok,
          problems: result.problems.length,
          kinds,
          account_days: result.days.length,
          open_receivables: result.openReceivables.length,
          stale_receivables: stale,
          unclaimed_lines: result.unclaimed.lines,
          unclaimed_amount: result.unclaimed.amount,
        },
      })
    )
    const summary = `${result.openReceivables.length} open receivable${result.openReceivables.length === 1 ? '' : 's'}, ${result.unclaimed.lines} unclaimed credit line${result.unclaimed.lines === 1 ? '' : 's'}`
    if (result.ok) {
      ctx.session.flash(
        'success',
        `Reconciliation check: ok, the ledger agrees with the bank statements (${summary}).`
      )
    } else {
      const n = result.problems.length
      ctx.session.flash(
        'error',
        `Reconciliation check: ${n} problem${n === 1 ? '' : 's'} (${Object.entries(kinds)
          .map(([kind, total]) => `${kind} ${total}`)
          .join(', ')}), listed under the last whole-database check.`
      )
    }
    const accounts = (await depositAccountChoices()).map((choice) => Number(choice.value))
    const filters = readFilters(ctx.request.only(['account', 'from', 'to']), accounts)
    return ctx.response.redirect(`/admin/reconciliation?${queryString(filters)}`)
  }
}
