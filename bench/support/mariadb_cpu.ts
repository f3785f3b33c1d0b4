import { readFileSync } from 'node:fs'
import mysql from 'mysql2/promise'

/**
 * A connection of its own to the benchmark's database (several statements
 * per query, the batch pool's READ COMMITTED and strict session), and the
 * local MariaDB server's user + system CPU so far in ms, read from /proc
 * (clock ticks of 10 ms): bench:slots and bench:statements.
 */
export async function mariadbWithCpu() {
  const connection = await mysql.createConnection({
    host: process.env.DB_HOST ?? '127.0.0.1',
    port: Number(process.env.DB_PORT ?? 3306),
    user: process.env.DB_USER ?? 'root',
    password: process.env.DB_PASSWORD ?? '',
    database: process.env.DB_DATABASE,
    multipleStatements: true,
  })
  const [pidRows] = await connection.query('SELECT @@GLOBAL.pid_file AS file')
  const serverPid = readFileSync((pidRows as Array<{ file: string }>)[0].file, 'utf8').trim()
  // The batch pool's session (config/database.ts).
  await connection.query(
    "SET SESSION tx_isolation = 'READ-COMMITTED', SESSION sql_mode = CONCAT_WS(',', @@SESSION.sql_mode, 'STRICT_TRANS_TABLES')"
  )
  function serverCpu() {
    const fields = readFileSync(`/proc/${serverPid}/stat`, 'utf8').split(') ')[1].split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 10
  }
  return { connection, serverCpu }
}
