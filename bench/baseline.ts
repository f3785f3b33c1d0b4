/*
| The bare baseline of `npm run bench`: what the hardware gives a signed API
| call without the gateway. A node:https server that reads the body, checks
| X-SIGNATURE (HMAC-SHA256 hex of the raw body with the merchant secret, in
| constant time) and makes one unique INSERT through mysql2 per request,
| then answers a small JSON envelope. bench/run.ts starts it with the same
| certificate, database and loader as the gateway, side by side in one run.
|
| Environment: BASELINE_PORT, BASELINE_PROCESSES (node:cluster workers, like
| WEB_CONCURRENCY), BASELINE_SECRET, TLS_CERT_PATH, TLS_KEY_PATH, DB_HOST,
| DB_PORT, DB_USER, DB_PASSWORD, DB_DATABASE.
*/
import cluster from 'node:cluster'
import { createHmac, timingSafeEqual } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:https'
import mysql from 'mysql2/promise'

const PROCESSES = Math.max(1, Number(process.env.BASELINE_PROCESSES ?? 1))
const TABLE = 'bench_baseline_requests'

if (cluster.isPrimary && PROCESSES > 1) {
  for (let index = 0; index < PROCESSES; index++) cluster.fork()
  cluster.on('exit', () => process.exit(0))
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM')
    })
  }
} else {
  const secret = process.env.BASELINE_SECRET ?? ''
  const pool = mysql.createPool({
    host: process.env.DB_HOST ?? '127.0.0.1',
    port: Number(process.env.DB_PORT ?? 3306),
    user: process.env.DB_USER ?? 'root',
    password: process.env.DB_PASSWORD ?? '',
    database: process.env.DB_DATABASE,
    connectionLimit: 10,
  })
  const answer = (status: number, body: object) => {
    const text = JSON.stringify(body)
    return {
      text,
      headers: {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(text),
      },
      status,
    }
  }
  const server = createServer(
    {
      cert: readFileSync(process.env.TLS_CERT_PATH!),
      key: readFileSync(process.env.TLS_KEY_PATH!),
    },
    (req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (chunk: Buffer) => chunks.push(chunk))
      req.on('end', async () => {
        const body = Buffer.concat(chunks)
        const given = Buffer.from(String(req.headers['x-signature'] ?? ''), 'hex')
        const expected = createHmac('sha256', secret).update(body).digest()
        let reply
        if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
          reply = answer(401, { code: 401, error: 'invalid-signature', success: false })
        } else {
          try {
            await pool.execute(`INSERT INTO ${TABLE} (signature, created_at) VALUES (?, NOW(3))`, [
              expected.toString('hex'),
            ])
            reply = answer(200, { code: 200, message: 'ok', success: true, data: {} })
          } catch (error) {
            reply = answer(409, {
              code: 409,
              error: (error as { code?: string }).code ?? 'error',
              success: false,
            })
          }
        }
        res.writeHead(reply.status, reply.headers).end(reply.text)
      })
    }
  )
  server.listen(Number(process.env.BASELINE_PORT), '127.0.0.1')
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      server.close()
      server.closeAllConnections()
      void pool.end().finally(() => process.exit(0))
    })
  }
}
