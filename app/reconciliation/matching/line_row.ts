/** What matching made of a line: `skipped` when it was no longer new. */
export type MatchResult = 'matched' | 'unmatched' | 'late' | 'skipped'

/** A `statement_lines` row as the matcher reads it. */
export interface LineRow {
  id: number
  deposit_account_id: number
  line_at: Date
  direction: 'credit' | 'debit'
  amount: number
  reference: string | null
  /** The bank's transaction reference (a slip's transRef), when the statement has one. */
  trans_ref: string | null
  /** The transfer's identity (statements.ts, transferKey), when read. */
  transfer_key?: string | null
  status: string
}

/** The columns of a line the matcher reads. */
export const LINE_COLUMNS = [
  'id',
  'deposit_account_id',
  'line_at',
  'direction',
  'amount',
  'reference',
  'trans_ref',
  'transfer_key',
  'status',
]

export function toLineRow(row: Record<string, any>): LineRow {
  return {
    id: Number(row.id),
    deposit_account_id: Number(row.deposit_account_id),
    line_at: new Date(row.line_at),
    direction: row.direction,
    amount: Number(row.amount),
    reference: row.reference,
    trans_ref: row.trans_ref ?? null,
    transfer_key: row.transfer_key ?? null,
    status: row.status,
  }
}
