import type { HttpContext } from '@adonisjs/core/http'

/**
 * The two response shapes of the merchant API, field order as in the spec.
 * Bodies are serialised here with JSON.stringify so that amounts built with
 * amountJson() keep their two decimals.
 */
export function sendSuccess(ctx: HttpContext, data: Record<string, unknown>, message = 'success') {
  sendSerialized(ctx, 200, successBody(data, message))
}

export function sendError(
  ctx: HttpContext,
  status: number,
  error: string,
  message: string,
  data?: Record<string, unknown>
) {
  sendSerialized(ctx, status, errorBody(status, error, message, data))
}

/** The success envelope as sent. */
export function successBody(data: Record<string, unknown>, message = 'success') {
  return JSON.stringify({ code: 200, message, data, success: true })
}

/** The error envelope as sent. */
export function errorBody(
  status: number,
  error: string,
  message: string,
  data?: Record<string, unknown>
) {
  const body: Record<string, unknown> = { code: status, error, success: false, message }
  if (data) body.data = data
  return JSON.stringify(body)
}

/** Sends an envelope already serialised (a stored answer sent again, byte for byte). */
export function sendSerialized(ctx: HttpContext, status: number, body: string) {
  ctx.response.status(status)
  ctx.response.header('Content-Type', 'application/json; charset=utf-8')
  ctx.response.header('Cache-Control', 'no-store')
  ctx.response.send(body)
}
