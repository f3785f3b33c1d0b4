/*
| HAProxy's health check of the database nodes (bin/cluster/haproxy.ts), in a
| process of its own so that a busy or paused parent cannot make HAProxy mark
| healthy nodes down:
|
|   node --import @poppinss/ts-exec bin/cluster/check_agent.ts [--standalone] <agent port>:<sql port> ...
|
| GET http://127.0.0.1:<agent port>/ answers 200 when the node on <sql port>
| is Synced and part of the Primary component (with --standalone: answers a
| query), 503 otherwise, and 503 when the node does not answer within 1 s. A
| TCP check is not enough: a node stopped with SIGSTOP still accepts
| connections (the kernel completes the handshake), and a donor or a node
| cut off from the others still answers SELECT 1.
*/
import { createServer } from 'node:http'
import mysql, { type Connection } from 'mysql2/promise'

const TIMEOUT_MS = 1000
const standalone = process.argv.includes('--standalone')
const pairs = process.argv
  .slice(2)
  .filter((arg) => /^\d+:\d+$/.test(arg))
  .map((arg) => arg.split(':').map(Number) as [number, number])

const STATUS_SQL =
  "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_local_state_comment', 'wsrep_cluster_status')"

for (const [agentPort, sqlPort] of pairs) {
  // One connection kept open: a check then costs one query, not a connection and a login.
  let connection: Connection | undefined

  const check = async () => {
    if (!connection) {
      connection = await mysql.createConnection({
        host: '127.0.0.1',
        port: sqlPort,
        user: 'root',
        connectTimeout: TIMEOUT_MS,
      })
      connection.on('error', () => {})
    }
    if (standalone) {
      await connection.query({ sql: 'SELECT 1', timeout: TIMEOUT_MS })
      return true
    }
    const [rows] = await connection.query({ sql: STATUS_SQL, timeout: TIMEOUT_MS })
    const values = new Map(
      (rows as { Variable_name: string; Value: string }[]).map((row) => [
        row.Variable_name,
        row.Value,
      ])
    )
    return (
      values.get('wsrep_local_state_comment') === 'Synced' &&
      values.get('wsrep_cluster_status') === 'Primary'
    )
  }

  createServer((_request, response) => {
    check().then(
      (up) => {
        response.writeHead(up ? 200 : 503, { 'content-type': 'text/plain' })
        response.end(up ? 'up\n' : 'down\n')
      },
      () => {
        connection?.destroy()
        connection = undefined
        response.writeHead(503, { 'content-type': 'text/plain' })
        response.end('down\n')
      }
    )
  }).listen(agentPort, '127.0.0.1')
}
