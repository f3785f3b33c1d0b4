import type { QueryClientContract } from '@adonisjs/lucid/types/database'

/**
 * utf8mb4_bin still ignores trailing spaces ('ABC1' = 'ABC1 '); the NO PAD
 * binary collation of MariaDB (or MySQL 8.0.17+) does not, so it is used
 * where the server has one. Identifier columns use it: they compare byte for
 * byte.
 */
const NO_PAD_BINARY = ['utf8mb4_nopad_bin', 'utf8mb4_0900_bin']

export async function binaryCollation(db: QueryClientContract) {
  const [rows] = await db.rawQuery(
    'SELECT COLLATION_NAME AS name FROM information_schema.COLLATIONS WHERE COLLATION_NAME IN (?, ?)',
    NO_PAD_BINARY
  )
  const names = rows.map((row: { name: string }) => row.name)
  return NO_PAD_BINARY.find((name) => names.includes(name)) ?? 'utf8mb4_bin'
}
