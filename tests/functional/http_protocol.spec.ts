import { test } from '@japa/runner'
import { METHODS } from 'node:http'
import { connect as tlsConnect } from 'node:tls'
import type { Assert } from '@japa/assert'
import { assertError } from '#tests/helpers/envelope'
import { rawRequest } from '#tests/helpers/http'
import { testServers } from '#tests/helpers/servers'

const MERCHANT_ENDPOINTS = [
  '/balance',
  '/payment/create',
  '/payment/create-transfer',
  '/payment/create-flex',
  '/payment/query',
  '/withdraw/create',
  '/withdraw/query',
  '/thb-settlement/create',
  '/thb-settlement/query',
]

interface Exchange {
  status: number
  headers: Record<string, string>
  text: string
  json: any
  /** The server closed the connection after its answer. */
  closed: boolean
}

/**
 * Writes `bytes` on a fresh TLS connection to the test gateway and reads until
 * the server closes it (or 3 s pass): the only way to send what HTTP clients
 * refuse to produce.
 *
 * `writeFirst`: as curl, PHP or a client on a slow link do, the whole request
 * is written (in TLS records of `piece` bytes, a few milliseconds apart)
 * before the answer is read. A server that closes the connection while such a
 * client is still writing resets it, and the answer is lost.
 */
function exchange(
  bytes: string,
  options: { writeFirst?: boolean; piece?: number } = {}
): Promise<Exchange> {
  const url = new URL(testServers.httpsUrl)
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({
      host: url.hostname,
      port: Number(url.port),
      ca: testServers.certificate,
      checkServerIdentity: () => undefined,
    })
    const chunks: Buffer[] = []
    let closed = false
    let timer = setTimeout(() => socket.destroy(), 3000)
    socket.on('secureConnect', async () => {
      if (!options.writeFirst) return socket.write(bytes)
      socket.pause()
      const piece = options.piece ?? 16_384
      for (let offset = 0; offset < bytes.length; offset += piece) {
        const written = socket.write(bytes.slice(offset, offset + piece))
        if (socket.destroyed) return
        if (!written) await new Promise((drained) => socket.once('drain', drained))
        await new Promise((next) => setTimeout(next, 2))
      }
      clearTimeout(timer)
      timer = setTimeout(() => socket.destroy(), 3000)
      socket.resume()
    })
    socket.on('data', (chunk) => chunks.push(chunk))
    socket.on('end', () => (closed = true))
    socket.on('error', (error) => {
      // A reset after the answer was read still counts as a close.
      if (chunks.length === 0) reject(error)
      closed = true
    })
    socket.on('close', () => {
      clearTimeout(timer)
      const raw = Buffer.concat(chunks).toString('utf8')
      const [head, ...rest] = raw.split('\r\n\r\n')
      const [statusLine, ...headerLines] = head.split('\r\n')
      const headers: Record<string, string> = {}
      for (const line of headerLines) {
        const colon = line.indexOf(':')
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
      }
      const text = rest.join('\r\n\r\n')
      let json: any
      try {
        json = JSON.parse(text)
      } catch {}
      resolve({ status: Number(statusLine.split(' ')[1]), headers, text, json, closed })
    })
  })
}

function assertClosingEnvelope(assert: Assert, answer: Exchange, status: number, error: string) {
  assertError(assert, answer as any, status, error)
  assert.equal(answer.headers['content-type'], 'application/json; charset=utf-8')
  assert.equal(answer.headers['cache-control'], 'no-store')
  assert.equal(answer.headers['connection'], 'close')
  assert.isTrue(answer.closed, 'the server closes the connection')
}

test.group('HTTP protocol errors', () => {
  test('malformed framing: 400 invalid-inputs in the envelope, then the connection is closed', async ({
    assert,
  }) => {
    const cases: Record<string, string> = {
      'unknown method token': 'BREW /balance HTTP/1.1\r\nHost: x\r\n\r\n',
      'invalid method characters': 'GE@T /balance HTTP/1.1\r\nHost: x\r\n\r\n',
      'bad chunk size':
        'POST /balance HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
        'Transfer-Encoding: chunked\r\n\r\nZZ\r\nabc\r\n0\r\n\r\n',
      'bad chunk size after the first chunk':
        'POST /balance HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
        'Transfer-Encoding: chunked\r\n\r\n5\r\n{"a":\r\nZZ\r\n',
      'Content-Length with Transfer-Encoding':
        'POST /balance HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n' +
        'Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      'two Content-Lengths':
        'POST /balance HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!',
      'invalid Content-Length': 'POST /balance HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n',
      'unknown HTTP version': 'GET /balance HTTP/9.9\r\nHost: x\r\n\r\n',
      'space in a header name': 'GET /balance HTTP/1.1\r\nHo st: x\r\n\r\n',
      'no Host header on HTTP/1.1': 'GET /balance HTTP/1.1\r\n\r\n',
    }
    for (const [name, bytes] of Object.entries(cases)) {
      const answer = await exchange(bytes)
      assert.equal(answer.status, 400, `${name}: ${answer.text}`)
      assertClosingEnvelope(assert, answer, 400, 'invalid-inputs')
    }
  })

  test('headers over 16 KB: 431 request-header-fields-too-large', async ({ assert }) => {
    const answer = await exchange(
      `GET /balance HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17_000)}\r\n\r\n`
    )
    assertClosingEnvelope(assert, answer, 431, 'request-header-fields-too-large')
  })

  test('a client still writing an oversized request gets the answer before the close', async ({
    assert,
  }) => {
    const body = '{"merchant_id":"M1","token":"t","time":1}'
    const post = (headers: string, payload = body) =>
      `POST /balance HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${headers}` +
      `Content-Length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`
    const cases: Record<string, [string, number, string]> = {
      '100 KB X-SIGNATURE': [
        post(`X-Signature: ${'a'.repeat(100_000)}\r\n`),
        431,
        'request-header-fields-too-large',
      ],
      '1 MB X-SIGNATURE': [
        post(`X-Signature: ${'f'.repeat(1_000_000)}\r\n`),
        431,
        'request-header-fields-too-large',
      ],
      '3,000 small headers': [
        post(Array.from({ length: 3000 }, (_, i) => `X-H${i}: ${'v'.repeat(30)}\r\n`).join('')),
        431,
        'request-header-fields-too-large',
      ],
      'oversized header before a 2 MB body': [
        post(`X-Signature: ${'a'.repeat(40_000)}\r\n`, `{"a":"${'x'.repeat(2_000_000)}"}`),
        431,
        'request-header-fields-too-large',
      ],
      'invalid header name before a 1 MB body': [
        post('Bad Header: x\r\n', `{"a":"${'x'.repeat(1_000_000)}"}`),
        400,
        'invalid-inputs',
      ],
    }
    const lost: string[] = []
    for (const [name, [bytes, status, error]] of Object.entries(cases)) {
      for (const piece of [16_384, 65_536]) {
        const answer = await exchange(bytes, { writeFirst: true, piece }).catch(
          (failure: NodeJS.ErrnoException) => failure
        )
        if (answer instanceof Error) {
          lost.push(`${name}, ${piece}-byte writes: ${answer.code ?? answer.message}, no answer`)
          continue
        }
        assert.equal(answer.status, status, `${name}: ${answer.text}`)
        assertClosingEnvelope(assert, answer, status, error)
      }
    }
    assert.deepEqual(lost, [])
  })

  test('bad percent-encoding in the path: 400 invalid-inputs', async ({ assert }) => {
    for (const path of ['/balance%E0%A4%A', '/%', '/pay/%C0%80', '/sandbox/provider/%E0%A4']) {
      const answer = await exchange(`POST ${path} HTTP/1.1\r\nHost: x\r\n\r\n`)
      assertClosingEnvelope(assert, answer, 400, 'invalid-inputs')
    }
    // The query string is not the path: it is left to the endpoint.
    const query = await rawRequest('/balance?x=%E0%A4', { method: 'GET' })
    assertError(assert, query, 405, 'method-not-allowed')
  })
})

test.group('HTTP methods on merchant endpoints', () => {
  test('every method other than POST answers 405 method-not-allowed with Allow: POST', async ({
    assert,
  }) => {
    const methods = METHODS.filter((method) => method !== 'POST' && method !== 'CONNECT')
    for (const path of MERCHANT_ENDPOINTS) {
      for (const method of methods) {
        const response = await rawRequest(path, { method })
        assert.equal(response.status, 405, `${method} ${path}: ${response.text}`)
        assert.equal(response.headers['allow'], 'POST')
        if (method !== 'HEAD') assertError(assert, response, 405, 'method-not-allowed')
      }
    }
  })

  test('the HTTPS check still comes first for other methods', async ({ assert }) => {
    for (const method of ['TRACE', 'PROPFIND', 'GET']) {
      const response = await rawRequest('/balance', { method, plainHttp: true })
      assertError(assert, response, 403, 'https-required')
    }
  })

  test('CONNECT: 405 in the envelope on an endpoint, 404 elsewhere; the gateway is no proxy', async ({
    assert,
  }) => {
    const onEndpoint = await exchange('CONNECT /balance HTTP/1.1\r\nHost: x\r\n\r\n')
    assertClosingEnvelope(assert, onEndpoint, 405, 'method-not-allowed')
    assert.equal(onEndpoint.headers['allow'], 'POST')
    assert.match(onEndpoint.headers['x-request-id'], /^[0-9a-f-]{36}$/)

    const proxy = await exchange(
      'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'
    )
    assertClosingEnvelope(assert, proxy, 404, 'not-found')
  })
})
