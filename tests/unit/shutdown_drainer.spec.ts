import { test } from '@japa/runner'
import { connect as netConnect, type Socket } from 'node:net'
import { connect as tlsConnect } from 'node:tls'
import { createServer, request } from 'node:https'
import type { AddressInfo } from 'node:net'
import { drainer } from '#start/shutdown'
import { generateSelfSignedCertificate } from '#core/tls_certificate'

/**
 * The web process's connection draining (start/shutdown.ts) on a real HTTPS
 * server: what a client that opens a connection per request sees when the
 * signal arrives while its connection is still being set up.
 */
async function drainedServer() {
  const pair = await generateSelfSignedCertificate()
  const connections = drainer()
  const server = connections.track(
    createServer({ cert: pair.cert, key: pair.key }, (_req, res) => {
      res.setHeader('Content-Type', 'application/json')
      res.end('{"ok":true}')
    })
  )
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return { server, connections, port, cert: pair.cert }
}

/** One GET over `socket` (a TLS connection), or over a new connection when none is given. */
function get(port: number, cert: string, socket?: Socket) {
  return new Promise<{ status: number; connection?: string; body: string }>((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/',
        ca: cert,
        // With a socket of our own, no agent: Node then sends over createConnection's socket.
        ...(socket ? { createConnection: () => socket } : { agent: false }),
      },
      (res) => {
        let body = ''
        res.on('data', (chunk) => (body += chunk))
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body })
        )
      }
    )
    req.on('error', reject)
    req.end()
  })
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

test.group('Connection draining on shutdown', () => {
  test('a connection still in its TLS handshake when draining starts is answered before drain ends', async ({
    assert,
  }) => {
    const { server, connections, port, cert } = await drainedServer()
    // The TCP connection is accepted, but no TLS byte is sent yet.
    const accepted = new Promise((resolve) => server.once('connection', resolve))
    const raw = netConnect(port, '127.0.0.1')
    await accepted

    let drained = false
    const drain = connections.drain(5000).then(() => (drained = true))
    // Longer than the listening grace and several sweeps of the drain.
    await sleep(600)
    assert.isFalse(drained, 'drain ended while a connection was still in its handshake')

    const tls = tlsConnect({ socket: raw, ca: cert, servername: 'localhost' })
    const answer = await get(port, cert, tls)
    assert.equal(answer.status, 200)
    assert.equal(answer.connection, 'close')
    await drain
    assert.isTrue(drained)
  }).timeout(10_000)

  test('a connection opened just after draining starts is answered, then the server stops listening', async ({
    assert,
  }) => {
    const { connections, port, cert } = await drainedServer()
    const drain = connections.drain(5000)
    // A client that sent just after the signal (its connection was queued by the kernel).
    await sleep(20)
    const answer = await get(port, cert)
    assert.equal(answer.status, 200)
    assert.equal(answer.connection, 'close')
    await drain
    await assert.rejects(() => get(port, cert), /ECONNREFUSED/)
  }).timeout(10_000)
})
