import CallbackOutbox, { type CallbackOrderType } from '#callbacks/models/callback_outbox'
import CallbackAttempt from '#callbacks/models/callback_attempt'
import { formatGatewayDateTime } from '#core/clock'

/** How much of a merchant's answer the order page shows inline (the row keeps 1 KiB). */
const EXCERPT_SHOWN = 300

/**
 * An order's callbacks (one per final status) with every delivery attempt,
 * series by series (a resend starts a new series), oldest first.
 */
export async function callbacksOf(orderType: CallbackOrderType, orderId: number) {
  const rows = await CallbackOutbox.query()
    .where('order_type', orderType)
    .where('order_id', orderId)
    .orderBy('id')
  const attempts =
    rows.length === 0
      ? []
      : await CallbackAttempt.query()
          .whereIn(
            'callback_outbox_id',
            rows.map((row) => row.id)
          )
          .orderBy('callback_outbox_id')
          .orderBy('series')
          .orderBy('attempt')
          .orderBy('id')
  return rows.map((row) => ({
    id: row.id,
    status: row.status,
    notify_url: row.notifyUrl,
    body: row.body,
    state: row.state,
    series: row.series,
    attempts_in_series: row.attempts,
    created: formatGatewayDateTime(row.createdAt),
    delivered: formatGatewayDateTime(row.deliveredAt),
    next_attempt: formatGatewayDateTime(row.nextAttemptAt),
    last_error: row.lastError,
    attempts: attempts
      .filter((attempt) => attempt.callbackOutboxId === row.id)
      .map((attempt) => ({
        id: attempt.id,
        series: attempt.series,
        attempt: attempt.attempt,
        time: formatGatewayDateTime(attempt.createdAt),
        http_status: attempt.httpStatus,
        acknowledged: attempt.httpStatus === 200,
        latency_ms: attempt.latencyMs,
        target_address: attempt.targetAddress,
        excerpt: excerpt(attempt.responseExcerpt),
        response_excerpt: attempt.responseExcerpt,
        error: attempt.error,
      })),
  }))
}

function excerpt(text: string | null) {
  if (text === null) return null
  return text.length > EXCERPT_SHOWN ? `${text.slice(0, EXCERPT_SHOWN)}…` : text
}

export type OrderCallback = Awaited<ReturnType<typeof callbacksOf>>[number]
