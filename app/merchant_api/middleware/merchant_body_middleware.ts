import type { HttpContext } from '@adonisjs/core/http'
import type { NextFn } from '@adonisjs/core/types/http'
import type { IncomingMessage } from 'node:http'
import { GatewayError } from '#exceptions/gateway_error'
import gateway from '#config/gateway'

const utf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * Reads the raw request bytes (the signature covers them exactly), enforces
 * the size limit, and parses them as a JSON object. The framework's body
 * parser is not used on the merchant API so that nothing re-encodes the body
 * before the signature check.
 */
export default class MerchantBodyMiddleware {
  async handle(ctx: HttpContext, next: NextFn) {
    const contentType = ctx.request.header('content-type') ?? ''
    if (contentType.split(';')[0].trim().toLowerCase() !== 'application/json') {
      discard(ctx.request.request)
      throw GatewayError.invalidInputs('Content-Type must be application/json')
    }

    const rawBody = await readRawBody(ctx.request.request, gateway.bodyLimitBytes)
    if (rawBody.length === 0) {
      throw GatewayError.invalidInputs('request body is missing: send a JSON object')
    }

    let text: string
    try {
      text = utf8.decode(rawBody)
    } catch {
      throw GatewayError.invalidInputs('request body is not valid UTF-8')
    }

    let body: unknown
    try {
      body = JSON.parse(text)
    } catch (error) {
      throw GatewayError.invalidInputs(
        `request body is not valid JSON: ${(error as Error).message}`
      )
    }
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw GatewayError.invalidInputs('request body must be a JSON object')
    }

    ctx.merchantRequest = { rawBody, body: body as Record<string, unknown> }
    return next()
  }
}

function payloadTooLarge(limit: number) {
  return new GatewayError(
    413,
    'payload-too-large',
    `request body exceeds the limit of ${limit} bytes`
  )
}

function readRawBody(request: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(request.headers['content-length'])
  if (Number.isFinite(declared) && declared > limit) {
    discard(request)
    return Promise.reject(payloadTooLarge(limit))
  }

  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size > limit) {
        cleanup()
        discard(request)
        reject(payloadTooLarge(limit))
        return
      }
      chunks.push(chunk)
    }
    const onEnd = () => {
      cleanup()
      resolve(Buffer.concat(chunks))
    }
    const onError = (error: Error) => {
      cleanup()
      reject(error)
    }
    const cleanup = () => {
      request.off('data', onData)
      request.off('end', onEnd)
      request.off('error', onError)
    }
    request.on('data', onData)
    request.on('end', onEnd)
    request.on('error', onError)
  })
}

/**
 * Lets the rest of a refused body flow into the void so that the client, still
 * sending, can read the error response instead of seeing a reset connection.
 */
function discard(request: IncomingMessage) {
  request.resume()
}
