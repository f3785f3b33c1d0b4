import { test } from '@japa/runner'
import { createServer, type Server } from 'node:https'
import type { AddressInfo } from 'node:net'
import type { TLSSocket } from 'node:tls'
import { generateSelfSignedCertificate } from '#core/tls_certificate'
import { postCallback } from '#callbacks/transport'
import { configureCallbacks } from '#callbacks/settings'
import { PRIVATE_TARGET_ERROR } from '#callbacks/target_guard'

/** A bare HTTPS receiver that notes, per request, whether the TLS session was resumed. */
async function sessionReceiver(pair: { cert: string; key: string }) {
  const requests: Array<{ resumed: boolean; connection: string | undefined }> = []
  let connections = 0
  const server: Server = createServer(pair, (req, res) => {
    req.resume()
    req.on('end', () => {
      requests.push({
        resumed: (req.socket as TLSSocket).isSessionReused(),
        connection: req.headers.connection,
      })
      res.writeHead(200).end('OK')
    })
  })
  server.on('connection', () => connections++)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    requests,
    connections: () => connections,
    url: (host = '127.0.0.1') => `https://${host}:${port}/callback`,
    close: () => {
      server.closeAllConnections()
      return new Promise((resolve) => server.close(resolve))
    },
  }
}

const body = Buffer.from('{"status":"PAID"}')

test.group('callback transport', (group) => {
  let pair: { cert: string; key: string }
  let receiver: Awaited<ReturnType<typeof sessionReceiver>>
  let restore: (() => void) | undefined

  group.setup(async () => {
    pair = await generateSelfSignedCertificate()
  })
  group.each.setup(async () => {
    receiver = await sessionReceiver(pair)
    return async () => {
      restore?.()
      restore = undefined
      await receiver.close()
    }
  })

  test('the next callback to an origin resumes the TLS session, on a new connection closed after it', async ({
    assert,
  }) => {
    restore = configureCallbacks({ extraCa: pair.cert, allowPrivateTargets: true })
    for (let k = 0; k < 3; k++) {
      const result = await postCallback(receiver.url(), body, 'a'.repeat(64))
      assert.isTrue(result.ok, result.error ?? '')
      assert.equal(result.targetAddress, '127.0.0.1')
    }
    assert.deepEqual(
      receiver.requests.map((request) => request.resumed),
      [false, true, true]
    )
    // The spec's Connection: close still holds: one connection per callback.
    assert.isTrue(receiver.requests.every((request) => request.connection === 'close'))
    assert.equal(receiver.connections(), 3)
  })

  test('a session cached while the guard was off never lets a forbidden name through', async ({
    assert,
  }) => {
    restore = configureCallbacks({ extraCa: pair.cert, allowPrivateTargets: true })
    assert.isTrue((await postCallback(receiver.url('localhost'), body, 'a'.repeat(64))).ok)
    const before = receiver.connections()

    const guarded = configureCallbacks({ allowPrivateTargets: false })
    const refused = await postCallback(receiver.url('localhost'), body, 'a'.repeat(64))
    guarded()
    assert.isFalse(refused.ok)
    assert.isTrue(refused.permanent)
    assert.include(refused.error, PRIVATE_TARGET_ERROR)
    assert.equal(receiver.connections(), before, 'no connection opened')
    assert.lengthOf(receiver.requests, 1)
  })

  test('a session cached under one CA list is not resumed under another', async ({ assert }) => {
    restore = configureCallbacks({ extraCa: pair.cert, allowPrivateTargets: true })
    assert.isTrue((await postCallback(receiver.url(), body, 'a'.repeat(64))).ok)

    // The receiver's certificate is no longer trusted: a resumed session would skip the check.
    const other = await generateSelfSignedCertificate()
    const distrusted = configureCallbacks({ extraCa: other.cert })
    const result = await postCallback(receiver.url(), body, 'a'.repeat(64))
    distrusted()
    assert.isFalse(result.ok)
    assert.isNull(result.httpStatus)
    assert.match(result.error ?? '', /certificate/i)
    assert.lengthOf(receiver.requests, 1)
  })
})
