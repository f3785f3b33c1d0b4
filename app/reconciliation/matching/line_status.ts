import type { QueryClientContract, TransactionClientContract } from '@adonisjs/lucid/types/database'

// What matching writes on statement lines: their status, note and order.

/**
 * Lines matched to the orders they settled, in one UPDATE: each line joined
 * to its order by id (a JSON table of the matches), not picked out of a
 * CASE of every match, which costs the server the square of the batch.
 */
export async function markMatched(
  trx: TransactionClientContract,
  matches: Array<{ lineId: number; orderType: string; orderId: number }>
) {
  if (matches.length === 0) return
  await trx.rawQuery(
    `UPDATE statement_lines AS line
       JOIN JSON_TABLE(?, '$[*]' COLUMNS (id BIGINT UNSIGNED PATH '$[0]',
         order_type VARCHAR(16) PATH '$[1]', order_id BIGINT UNSIGNED PATH '$[2]')) AS matched
         ON matched.id = line.id
       SET line.status = 'matched', line.order_type = matched.order_type,
         line.order_id = matched.order_id, line.matched_at = ?`,
    [
      JSON.stringify(matches.map((match) => [match.lineId, match.orderType, match.orderId])),
      new Date(),
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
