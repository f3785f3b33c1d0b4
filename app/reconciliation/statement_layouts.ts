import db from '@adonisjs/lucid/services/db'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import { LAYOUTS } from '#reconciliation/layouts/index'
import { validateDefinition, type LayoutDefinition } from '#reconciliation/layouts/definition'

/**
 * The layouts operators define, as stored (migration 210): each layout's
 * current approved version is what an import reads a file with.
 */

/** Names no defined layout may take: the built-in layouts, and the sandbox bank's. */
export const RESERVED_LAYOUT_NAMES = [...Object.keys(LAYOUTS), 'sandbox']

export const LAYOUT_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{1,39}$/
export const LAYOUT_NAME_RULE =
  '2-40 lower-case letters, digits, "-" or "_", starting with a letter or digit'

export interface DefinedLayout {
  id: number
  name: string
  bank: string | null
  version: number
  definition: LayoutDefinition
  /** What statement_imports.layout records: `name@v3`. */
  label: string
}

function json(value: unknown) {
  return typeof value === 'string' ? JSON.parse(value) : value
}

async function withDefinition(row: Record<string, any> | null): Promise<DefinedLayout | null> {
  if (!row) return null
  const definition = await validateDefinition(json(row.definition) as Record<string, unknown>)
  return {
    id: Number(row.id),
    name: row.name,
    bank: row.bank ?? null,
    version: Number(row.current_version),
    definition,
    label: `${row.name}@v${row.current_version}`,
  }
}

function currentQuery(client: QueryClientContract) {
  return client
    .from('statement_layouts as l')
    .join('statement_layout_versions as v', (join) => {
      join.on('v.statement_layout_id', 'l.id').andOn('v.version', 'l.current_version')
    })
    .select('l.id', 'l.name', 'l.bank', 'l.current_version', 'v.definition')
}

/** A defined layout by name, its current version; null when there is none. */
export async function findDefinedLayout(
  name: string,
  client: QueryClientContract = db.connection()
): Promise<DefinedLayout | null> {
  return withDefinition(
    await currentQuery(client).where('l.name', name.trim().toLowerCase()).first()
  )
}

/** The layout assigned to a deposit account, its current version; null: none assigned. */
export async function layoutOfAccount(
  accountId: number,
  client: QueryClientContract = db.connection()
): Promise<DefinedLayout | null> {
  return withDefinition(
    await currentQuery(client)
      .join('deposit_accounts as a', 'a.statement_layout_id', 'l.id')
      .where('a.id', accountId)
      .first()
  )
}

/** Every defined layout's name and id, by name (for selects and messages). */
export async function definedLayoutChoices() {
  const rows = await db
    .from('statement_layouts')
    .orderBy('name')
    .select('id', 'name', 'bank', 'current_version')
  return rows.map((row) => ({
    id: Number(row.id),
    name: String(row.name),
    bank: row.bank as string | null,
    version: Number(row.current_version),
  }))
}

/** One version of a layout, as stored. */
export async function layoutVersion(layoutId: number, version: number) {
  const row = await db
    .from('statement_layout_versions')
    .where('statement_layout_id', layoutId)
    .where('version', version)
    .first()
  if (!row) return null
  return { ...row, definition: json(row.definition) as LayoutDefinition }
}
