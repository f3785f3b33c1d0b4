import type { HttpContext } from '@adonisjs/core/http'

/**
 * The two response shapes of the merchant API, field order as in the spec.
 * Bodies are serialised here with JSON.stringify so that amounts built with
 * amountJson() keep their two decimals.
 */
export function sendSuccess(ctx: HttpContext, data: Record<string, unknown>, message = 'success') {
  send(ctx, 200, { code: 200, message, data, success: true })
}

export function sendError(
  ctx: HttpContext,
  status: number,
  error: string,
  message: string,
  data?: Record<string, unknown>
) {
  const body: Record<string, unknown> = { code: status, error, success: false, message }
  if (data) body.data = data
  send(ctx, status, body)
}

function send(ctx: HttpContext, status: number, body: Record<string, unknown>) {
  ctx.response.status(status)
  ctx.response.header('Content-Type', 'application/json; charset=utf-8')
  ctx.response.header('Cache-Control', 'no-store')
  ctx.response.send(JSON.stringify(body))
}
