import type { QueryClientContract, TransactionClientContract } from '@adonisjs/lucid/types/database'

// What matching writes on statement lines: their status, note and order.

/** Lines matched to the orders they settled, in one UPDATE. */
export async function markMatched(
  trx: TransactionClientContract,
  matches: Array<{ lineId: number; orderType: string; orderId: number }>
) {
  if (matches.length === 0) return
  const cases = `CASE id ${matches.map(() => 'WHEN ? THEN ?').join(' ')} END`
  await trx.rawQuery(
    `UPDATE statement_lines SET status = 'matched', order_type = ${cases}, order_id = ${cases},
       matched_at = ? WHERE id IN (${matches.map(() => '?').join(', ')})`,
    [
      ...matches.flatMap((match) => [match.lineId, match.orderType]),
      ...matches.flatMap((match) => [match.lineId, match.orderId]),
      new Date(),
      ...matches.map((match) => match.lineId),
    ]
  )
}

/** A debit line that confirmed a return to a payer: matched, with the line it returned. */
export async function markReturnLine(
  trx: TransactionClientContract,
  lineId: number,
  returnedLineId: number | null
) {
  await trx
    .from('statement_lines')
    .where('id', lineId)
    .update({
      status: 'matched',
      note: `return of statement line #${returnedLineId}`,
      matched_at: new Date(),
    })
}

/**
 * Gives lines their verdicts, one UPDATE per distinct verdict and note (most
 * lines share one: "no open order"); returns how many were still new.
 */
export async function setLines(
  client: QueryClientContract,
  verdicts: Array<{ id: number; status: 'unmatched' | 'late'; note: string }>
) {
  const groups = new Map<string, { status: string; note: string; ids: number[] }>()
  for (const verdict of verdicts) {
    const note = verdict.note.slice(0, 255)
    const name = `${verdict.status}|${note}`
    const group = groups.get(name) ?? { status: verdict.status, note, ids: [] }
    group.ids.push(verdict.id)
    groups.set(name, group)
  }
  let changed = 0
  for (const { status, note, ids } of groups.values()) {
    const [result] = await client.rawQuery(
      `UPDATE statement_lines SET status = ?, note = ?
         WHERE id IN (${ids.map(() => '?').join(', ')}) AND status = 'new'`,
      [status, note, ...ids]
    )
    changed += Number(result.affectedRows)
  }
  return changed
}
