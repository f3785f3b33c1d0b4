import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import app from '@adonisjs/core/services/app'
import testUtils from '@adonisjs/core/services/test_utils'
import { generateSelfSignedCertificate } from '#core/tls_certificate'
import { createGatewayServer } from '#start/node_server'

/**
 * The functional suite talks to the real gateway over the network: the
 * application's HTTPS server (as `npm start` serves it) and, to prove that
 * plain HTTP is refused, the same request handler behind a plain HTTP socket.
 */
export const testServers = { httpsUrl: '', httpUrl: '', certificate: '', key: '' }

export async function startTestServers() {
  const certificate = await generateSelfSignedCertificate()
  testServers.certificate = certificate.cert
  testServers.key = certificate.key

  let httpsServer: Server | undefined
  process.env.HOST = '127.0.0.1'
  process.env.PORT = '0' // any free port: never collides with a running gateway
  const closeHttps = await testUtils.httpServer().start((handler) => {
    httpsServer = createGatewayServer(handler, certificate)
    return httpsServer
  })
  testServers.httpsUrl = `https://127.0.0.1:${(httpsServer!.address() as AddressInfo).port}`

  const server = await app.container.make('server')
  const plain = createGatewayServer((req, res) => server.handle(req, res))
  await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve))
  testServers.httpUrl = `http://127.0.0.1:${(plain.address() as AddressInfo).port}`

  return async () => {
    await new Promise((resolve) => plain.close(resolve))
    await closeHttps()
  }
}
