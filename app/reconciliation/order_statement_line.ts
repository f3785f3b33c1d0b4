import db from '@adonisjs/lucid/services/db'
import type { OrderType } from '#core/order_events'
import { formatThb } from '#core/money'
import { formatGatewayDateTime } from '#core/clock'

/**
 * The bank statement line matched to an order (a credit that paid a
 * payment, a debit that confirmed a bulk-file payout), with its deposit
 * account and the import it came in; null when no line is matched to it.
 * An order has at most one (a unique key on the line's order).
 */
export async function statementLineOf(orderType: OrderType, orderId: number) {
  const line = await db
    .from('statement_lines')
    .join('deposit_accounts', 'deposit_accounts.id', 'statement_lines.deposit_account_id')
    .join('statement_imports', 'statement_imports.id', 'statement_lines.import_id')
    .where('statement_lines.order_type', orderType)
    .where('statement_lines.order_id', orderId)
    .select(
      'statement_lines.id',
      'statement_lines.deposit_account_id',
      'deposit_accounts.bank',
      'deposit_accounts.account_no',
      'statement_lines.line_at',
      'statement_lines.direction',
      'statement_lines.amount',
      'statement_lines.reference',
      'statement_lines.description',
      'statement_lines.status',
      'statement_lines.note',
      'statement_lines.matched_at',
      'statement_imports.id as import_id',
      'statement_imports.layout',
      'statement_imports.file_name',
      'statement_imports.actor as imported_by'
    )
    .first()
  if (!line) return null
  return {
    id: Number(line.id),
    deposit_account_id: Number(line.deposit_account_id),
    account: `${line.bank} ${line.account_no}`,
    time: formatGatewayDateTime(line.line_at),
    direction: line.direction as 'credit' | 'debit',
    amount: formatThb(Number(line.amount)),
    reference: line.reference as string | null,
    description: line.description as string,
    status: line.status as string,
    note: line.note as string | null,
    matched_at: formatGatewayDateTime(line.matched_at),
    import_id: Number(line.import_id),
    layout: line.layout as string,
    file_name: line.file_name as string,
    imported_by: line.imported_by as string,
  }
}
