import db from '@adonisjs/lucid/services/db'

/** One defined layout's row, or null. */
export async function statementLayoutRow(id: number): Promise<Record<string, any> | null> {
  return (await db.from('statement_layouts').where('id', id).first()) ?? null
}

/** A page of the defined layouts by name, each with the number of accounts reading with it. */
export async function statementLayoutList(page: number, perPage = 25) {
  return db
    .from('statement_layouts as l')
    .leftJoin('deposit_accounts as a', 'a.statement_layout_id', 'l.id')
    .groupBy('l.id')
    .orderBy('l.name')
    .select('l.id', 'l.name', 'l.bank', 'l.current_version', 'l.updated_at', 'l.created_by')
    .count('a.id as accounts')
    .paginate(page, perPage)
}

/** The names of every defined layout. */
export async function statementLayoutNames() {
  const rows = await db.from('statement_layouts').select('name')
  return new Set(rows.map((row) => String(row.name)))
}

/** A layout's versions, newest first. */
export async function statementLayoutVersions(layoutId: number) {
  return db
    .from('statement_layout_versions')
    .where('statement_layout_id', layoutId)
    .orderBy('version', 'desc')
}

/** The deposit accounts reading their statements with a layout. */
export async function accountsReadingWith(layoutId: number) {
  return db
    .from('deposit_accounts')
    .where('statement_layout_id', layoutId)
    .orderBy('id')
    .select('id', 'bank', 'account_no', 'account_name', 'deposit_group')
}
