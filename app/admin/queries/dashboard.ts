import { DateTime } from 'luxon'
import { GATEWAY_ZONE } from '#core/clock'
import { openReceivablesSummary, type ReceivablesSummary } from '#admin/queries/reconciliation_page'
import {
  dashboardScope,
  dashboardWindow,
  NO_FILTER,
  type DashboardFilter,
} from '#admin/queries/dashboard_scope'
import {
  callbackFigures,
  depositFigures,
  matchTimes,
  payoutFigures,
  type CallbackFigures,
  type DailySeries,
  type MatchTimes,
} from '#admin/queries/dashboard_daily'
import {
  channelUsage,
  queueDepths,
  reviewAges,
  type AccountUsage,
  type QueueDepth,
  type ReviewAges,
} from '#admin/queries/dashboard_queues'

/**
 * The back-office dashboard's data, one function per figure: what it covers
 * in dashboard_scope, the per-day figures in dashboard_daily (past days kept
 * by dashboard_rollups), the figures of the moment in dashboard_queues. The
 * cost follows the orders of a day, never the size of the tables
 * (docs/benchmarks.md).
 */

export interface DashboardData {
  window: { days: string[]; today: string; generatedAt: string }
  deposits: DailySeries
  payouts: DailySeries
  matching: MatchTimes
  callbacks: CallbackFigures
  usage: AccountUsage[]
  queues: QueueDepth[] | null
  review: ReviewAges
  /** Payments credited before their bank line (open receivables), now. */
  receivables: ReceivablesSummary
  /** Whether a platform or merchant filter narrowed the figures. */
  filtered: boolean
}

/** Every figure of the dashboard, the queries run side by side. */
export async function dashboardData(
  now: DateTime = DateTime.utc(),
  filter: DashboardFilter = NO_FILTER
): Promise<DashboardData> {
  const window = dashboardWindow(now)
  const scope = await dashboardScope(filter)
  const [deposits, payouts, matching, callbacks, usage, queues, review, receivables] =
    await Promise.all([
      depositFigures(window, scope),
      payoutFigures(window, scope),
      matchTimes(window, scope),
      callbackFigures(window, scope),
      channelUsage(window, scope),
      queueDepths(),
      reviewAges(window, scope),
      openReceivablesSummary({ now: window.now.toJSDate(), merchantIds: scope.merchantIds }),
    ])
  return {
    window: {
      days: window.days,
      today: window.days[window.days.length - 1],
      generatedAt: window.now.setZone(GATEWAY_ZONE).toFormat('yyyy-LL-dd HH:mm:ss'),
    },
    deposits,
    payouts,
    matching,
    callbacks,
    usage,
    queues,
    review,
    receivables,
    filtered: scope.merchantIds !== null,
  }
}
