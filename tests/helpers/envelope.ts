import type { Assert } from '@japa/assert'
import type { RawResponse } from '#tests/helpers/http'

/**
 * The spec's error envelope: HTTP status mirrored in `code`, the stable
 * identifier in `error`, `success` false, a non-empty human `message` (and
 * `data` only when the error carries it), in that field order. `message`, when
 * given, must equal the string or match the pattern.
 */
export function assertError(
  assert: Assert,
  response: RawResponse,
  status: number,
  error: string,
  message?: string | RegExp
) {
  assert.equal(response.status, status, response.text)
  const keys = Object.keys(response.json ?? {})
  assert.deepEqual(
    keys.filter((key) => key !== 'data'),
    ['code', 'error', 'success', 'message'],
    response.text
  )
  assert.equal(response.json.code, status)
  assert.equal(response.json.error, error, response.text)
  assert.isFalse(response.json.success)
  assert.isString(response.json.message)
  assert.isAbove(response.json.message.length, 0)
  if (typeof message === 'string') assert.equal(response.json.message, message)
  if (message instanceof RegExp) assert.match(response.json.message, message)
}
