import { DateTime } from 'luxon'
import { formatThb } from '#core/money'
import type { DashboardData } from '#admin/queries/dashboard'
import type { DailySeries } from '#admin/queries/dashboard_daily'

/**
 * The dashboard's figures as the page shows them: THB with thousands
 * separators, rates as percentages, durations for people, and the chart
 * series as JSON for resources/admin/dashboard.js (the tables beside the
 * charts carry the same numbers for readers without JavaScript).
 */

/** "1,234,567.50" for 123456750 satang: formatThb, the pages' one way of writing THB. */
export const formatBaht = formatThb

/** "97.5 %", or "—" when there was nothing to count. */
export function formatRate(value: number | null) {
  return value === null ? '—' : `${(Math.round(value * 1000) / 10).toFixed(1)} %`
}

/** "45 s", "12 min 5 s", "3 h 20 min"; "—" when nothing was matched. */
export function formatSeconds(seconds: number | null) {
  if (seconds === null) return '—'
  if (seconds < 60) return `${seconds} s`
  const minutes = Math.floor(seconds / 60)
  if (minutes < 60) return `${minutes} min ${seconds % 60} s`
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`
}

/** An age in hours as the review queues show one: "12 min", "3 h 5 min", "2 d 4 h"; "—" for none. */
export function formatHours(hours: number | null) {
  if (hours === null) return '—'
  const minutes = Math.max(0, Math.floor(hours * 60))
  if (minutes < 60) return `${minutes} min`
  const whole = Math.floor(minutes / 60)
  if (whole < 24) return `${whole} h ${minutes % 60} min`
  return `${Math.floor(whole / 24)} d ${whole % 24} h`
}

const count = (value: number) => value.toLocaleString('en-US')

function period(figures: DailySeries['today']) {
  return {
    count: count(figures.count),
    amount: formatThb(figures.amount),
    succeeded: count(figures.succeeded),
    succeededAmount: formatThb(figures.succeededAmount),
    failed: count(figures.failed),
    open: count(figures.open),
    successRate: formatRate(figures.successRate),
    failureRate: formatRate(figures.failureRate),
  }
}

/** A JSON text safe inside <script type="application/json">: no `<` can close the element. */
export function scriptJson(value: unknown) {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
}

/** The platforms and merchants the dashboard's selects offer, and the chosen ones. */
export interface FilterChoices {
  platforms: Array<{ id: number; name: string }>
  /** The chosen platform's merchants, or every merchant. */
  merchants: Array<{ id: number; name: string; platformId: number }>
  platformId: number | null
  merchantId: number | null
}

const NO_CHOICES: FilterChoices = {
  platforms: [],
  merchants: [],
  platformId: null,
  merchantId: null,
}

/** The selects' options and what the heading says the figures are of. */
export function presentFilter(choices: FilterChoices) {
  const platformName = new Map(choices.platforms.map((platform) => [platform.id, platform.name]))
  const merchant = choices.merchants.find((item) => item.id === choices.merchantId)
  return {
    platformId: choices.platformId,
    merchantId: choices.merchantId,
    platformOptions: choices.platforms.map((platform) => ({
      value: platform.id,
      label: platform.name,
    })),
    // Across platforms, each merchant says which platform it is on.
    merchantOptions: choices.merchants.map((item) => ({
      value: item.id,
      label:
        choices.platformId === null
          ? `${item.name} (${platformName.get(item.platformId) ?? ''})`
          : item.name,
    })),
    label: merchant
      ? merchant.name
      : choices.platformId !== null
        ? (platformName.get(choices.platformId) ?? null)
        : null,
  }
}

export function presentDashboard(data: DashboardData, choices: FilterChoices = NO_CHOICES) {
  const dayLabel = (day: string) => DateTime.fromISO(day).toFormat('ccc d LLL')
  const baht = (satang: number) => satang / 100 // chart heights only, never money arithmetic
  const rows = data.window.days.map((day, index) => {
    const deposit = data.deposits.days[index]
    const payout = data.payouts.days[index]
    const matched = data.matching.days[index]
    const callbacks = data.callbacks.days[index]
    const decided = deposit.count - deposit.open
    return {
      day,
      label: dayLabel(day),
      today: index === data.window.days.length - 1,
      deposits: count(deposit.count),
      depositsPaid: count(deposit.succeeded),
      depositVolume: formatThb(deposit.succeededAmount),
      successRate: formatRate(decided > 0 ? deposit.succeeded / decided : null),
      expiryRate: formatRate(decided > 0 ? deposit.failed / decided : null),
      payouts: count(payout.count),
      payoutsSent: count(payout.succeeded),
      payoutVolume: formatThb(payout.succeededAmount),
      orderToMatch: formatSeconds(matched.orderToMatch),
      callbackFailureRate: formatRate(
        callbacks.attempts > 0 ? callbacks.failedAttempts / callbacks.attempts : null
      ),
    }
  })
  const usage = data.usage.map((account) => {
    const limit = (used: number, max: number | null, money: boolean) => ({
      text: `${money ? formatThb(used) : count(used)}${max === null ? '' : ` / ${money ? formatThb(max) : count(max)}`}`,
      percent: max === null ? null : Math.min(100, max > 0 ? Math.round((used / max) * 100) : 100),
    })
    const withStep = (figure: { text: string; percent: number | null }) => ({
      ...figure,
      // The meter's width class (w0 … w100 in admin.css: no inline style under the CSP).
      step: figure.percent === null ? 0 : Math.round(figure.percent / 5) * 5,
    })
    return {
      ...account,
      hourCount: withStep(limit(account.hour.count, account.hour.countLimit, false)),
      hourAmount: withStep(limit(account.hour.amount, account.hour.amountLimit, true)),
      dayCount: withStep(limit(account.day.count, account.day.countLimit, false)),
      dayAmount: withStep(limit(account.day.amount, account.day.amountLimit, true)),
      fullestText: account.fullest === null ? 'no limit' : formatRate(account.fullest),
      high: account.fullest !== null && account.fullest >= 0.8,
    }
  })
  const charts = {
    // Two lines under each bar ("Mon", "16 Nov"): seven days fit without tilted labels.
    labels: data.window.days.map((day) => {
      const date = DateTime.fromISO(day)
      return [date.toFormat('ccc'), date.toFormat('d LLL')]
    }),
    deposits: {
      paid: data.deposits.days.map((day) => day.succeeded),
      expired: data.deposits.days.map((day) => day.failed),
      other: data.deposits.days.map((day) => day.count - day.succeeded - day.failed),
      successRate: data.deposits.days.map((day) =>
        day.count - day.open > 0
          ? Math.round((day.succeeded / (day.count - day.open)) * 1000) / 10
          : null
      ),
    },
    volume: {
      deposits: data.deposits.days.map((day) => baht(day.succeededAmount)),
      payouts: data.payouts.days.map((day) => baht(day.succeededAmount)),
    },
    matching: {
      orderToMatch: data.matching.days.map((day) =>
        day.orderToMatch === null ? null : Math.round(day.orderToMatch / 6) / 10
      ),
      lineToMatch: data.matching.days.map((day) =>
        day.lineToMatch === null ? null : Math.round(day.lineToMatch / 6) / 10
      ),
    },
    review: data.review,
  }
  return {
    generatedAt: data.window.generatedAt,
    today: dayLabel(data.window.today),
    deposits: { today: period(data.deposits.today), week: period(data.deposits.week) },
    payouts: { today: period(data.payouts.today), week: period(data.payouts.week) },
    matching: {
      today: {
        matched: count(data.matching.today.matched),
        orderToMatch: formatSeconds(data.matching.today.orderToMatch),
        lineToMatch: formatSeconds(data.matching.today.lineToMatch),
      },
      week: {
        matched: count(data.matching.week.matched),
        orderToMatch: formatSeconds(data.matching.week.orderToMatch),
        lineToMatch: formatSeconds(data.matching.week.lineToMatch),
      },
    },
    callbacks: {
      today: {
        ...data.callbacks.today,
        failureRateText: formatRate(data.callbacks.today.failureRate),
      },
      week: {
        ...data.callbacks.week,
        failureRateText: formatRate(data.callbacks.week.failureRate),
      },
      givenUp: count(data.callbacks.givenUp),
      pending: count(data.callbacks.pending),
    },
    // Filtered, the KPI counts only the queues the filter applies to.
    reviewTotal: data.review.queues
      .filter((item) => !item.allMerchants)
      .reduce((total, item) => total + item.total, 0),
    filtered: data.filtered,
    filter: presentFilter(choices),
    receivables: {
      open: count(data.receivables.open),
      amount: formatThb(data.receivables.amount),
      oldest: formatHours(data.receivables.oldestHours),
      stale: count(data.receivables.stale),
      anyStale: data.receivables.stale > 0,
      windowHours: data.receivables.windowHours,
    },
    review: data.review,
    rows,
    usage,
    queues: data.queues,
    chartJson: scriptJson(charts),
  }
}
