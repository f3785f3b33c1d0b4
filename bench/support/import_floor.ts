/*
| The floor of the statement import benchmark: the same parsed lines of a file,
| with the values the gateway stores for them (StoredLineRows: fingerprint,
| transfer key, status new), written to statement_lines by bare multi-row
| INSERTs through mysql2 in one transaction: the same table, indexes and
| foreign keys, nothing else. What storing the lines costs this database on
| this machine, whatever the gateway does around it.
*/
import { readFile } from 'node:fs/promises'
import mysql from 'mysql2/promise'

export interface FloorResult {
  rows: number
  seconds: number
}

/**
 * The file's lines, parsed by its layout and given the values storeStatement
 * writes (not timed).
 */
export async function parsedLineRows(file: string, accountId: number, importId: number) {
  const { parseStatement } = await import('#reconciliation/layouts/index')
  const { StoredLineRows } = await import('#reconciliation/statements')
  const rowsOf = new StoredLineRows(accountId, importId)
  const rows = []
  for await (const line of parseStatement('neutral', await readFile(file, 'utf8'))) {
    rows.push(rowsOf.row(line))
  }
  return rows
}

/**
 * Times INSERTs of `rows` (`chunk` rows each, one transaction) on a connection
 * of its own, then empties statement_lines again (TRUNCATE: a fresh table for
 * whatever is measured next, without a purge of deleted rows running beside it).
 */
export async function bareInsertFloor(options: {
  connection: mysql.ConnectionOptions
  columns: string[]
  rows: unknown[][]
  chunk?: number
}): Promise<FloorResult> {
  const chunk = options.chunk ?? 1000
  const connection = await mysql.createConnection(options.connection)
  try {
    const row = `(${options.columns.map(() => '?').join(', ')})`
    const started = performance.now()
    await connection.query('BEGIN')
    for (let start = 0; start < options.rows.length; start += chunk) {
      const part = options.rows.slice(start, start + chunk)
      await connection.query(
        `INSERT INTO statement_lines (${options.columns.join(', ')}) VALUES ${part.map(() => row).join(', ')}`,
        part.flat()
      )
    }
    await connection.query('COMMIT')
    const seconds = (performance.now() - started) / 1000
    await connection.query('SET foreign_key_checks = 0')
    await connection.query('TRUNCATE TABLE statement_lines')
    await connection.query('SET foreign_key_checks = 1')
    return { rows: options.rows.length, seconds }
  } finally {
    await connection.end()
  }
}
