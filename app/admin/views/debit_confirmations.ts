import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import { ageClass, ageLabel } from '#review/queues'
import { formatThb } from '#core/money'
import { formatGatewayDateTime } from '#core/clock'
import {
  confirmationOfLine,
  confirmationOfPayout,
  describeConfirmation,
  type ConfirmationPath,
  type PayoutConfirmation,
} from '#payouts/payout_confirmations'
import { receiptLineOf, type ReceiptLineView } from '#admin/views/receipt_lines'

/**
 * Money out as the back-office shows it (docs/reconciliation.md, "Money
 * out"): the transfer a debit line confirms (a payout, the return of a
 * credit to its payer, or an operator's explanation), a payout's debit line
 * or the wait for it, and the transfers a debit nobody claims may be.
 */

/** A payout_confirmations row as the line and order pages show it. */
export interface ConfirmationView {
  id: number
  path: ConfirmationPath
  /** describeConfirmation: the words the refusals use too. */
  text: string
  kind: 'payout' | 'return' | 'explained'
  /** The payout's row id (what describeConfirmation names), and its platform_order_id. */
  payout_order_id: number | null
  platform_order_id: string | null
  order_href: string | null
  order_status: string | null
  returned_line_id: number | null
  returned_line_href: string | null
  /** The debit line that confirms it; null: an open item, waiting for it. */
  line: ReceiptLineView | null
  /** The deposit account the money left (bank and number), once known. */
  account: string | null
  account_href: string | null
  amount: string
  actor: string
  reason: string | null
  recorded: string | null
  confirmed: string | null
  age: string
  age_class: string
}

export async function confirmationView(
  confirmation: PayoutConfirmation,
  now = DateTime.now()
): Promise<ConfirmationView> {
  const order =
    confirmation.payoutOrderId === null
      ? null
      : await db
          .from('payout_orders')
          .where('id', confirmation.payoutOrderId)
          .select('platform_order_id', 'status')
          .first()
  const platformOrderId: string | null = order?.platform_order_id ?? null
  const account =
    confirmation.depositAccountId === null
      ? null
      : await db
          .from('deposit_accounts')
          .where('id', confirmation.depositAccountId)
          .select('bank', 'account_no')
          .first()
  return {
    id: confirmation.id,
    path: confirmation.path,
    text: describeConfirmation(confirmation),
    kind:
      confirmation.path === 'bank_charge'
        ? 'explained'
        : confirmation.returnedLineId !== null
          ? 'return'
          : 'payout',
    payout_order_id: confirmation.payoutOrderId,
    platform_order_id: platformOrderId,
    order_href: platformOrderId ? `/admin/orders/${platformOrderId}` : null,
    order_status: order?.status ?? null,
    returned_line_id: confirmation.returnedLineId,
    returned_line_href:
      confirmation.returnedLineId === null
        ? null
        : `/admin/review/lines/${confirmation.returnedLineId}`,
    line: await receiptLineOf(confirmation.statementLineId),
    account: account ? `${account.bank} ${account.account_no}` : null,
    account_href: account ? `/admin/deposit-accounts/${confirmation.depositAccountId}` : null,
    amount: formatThb(confirmation.amount),
    actor: confirmation.actor,
    reason: confirmation.reason,
    recorded: formatGatewayDateTime(confirmation.createdAt),
    confirmed: formatGatewayDateTime(confirmation.confirmedAt),
    age: ageLabel(confirmation.createdAt, now),
    age_class: ageClass(confirmation.createdAt, now),
  }
}

/** What a debit line confirms (or an operator's explanation of it), if anything. */
export async function lineConfirmationView(lineId: number) {
  const confirmation = await confirmationOfLine(db.connection(), lineId)
  return confirmation ? confirmationView(confirmation) : null
}

/** A payout's transfer out: its confirmation (with its debit line, or waiting), if it succeeded. */
export async function payoutConfirmationView(payoutOrderId: number) {
  const confirmation = await confirmationOfPayout(db.connection(), payoutOrderId)
  return confirmation ? confirmationView(confirmation) : null
}

/** A transfer a debit line may be, for the line page's "It is this transfer" form. */
export interface DebitCandidate {
  kind: 'waiting' | 'pending' | 'return'
  /** The form field it fills, and its value. */
  field: 'platform_order_id' | 'returned_line_id'
  value: string
  label: string
  href: string
  status: string
  amount: string
  time: string | null
  who: string
  why: string
}

/**
 * The transfers a debit nobody claims may be, of its exact amount (the
 * confirmation refuses any other): successful payouts waiting for their
 * debit line, pending payouts (the statement would be the bank's answer),
 * and the returns to a payer waiting on the same deposit account; the
 * nearest in time first.
 */
export async function debitCandidates(line: {
  deposit_account_id: number
  amount: number
  line_at: Date
}): Promise<DebitCandidate[]> {
  const { amount } = line
  const lineAt = line.line_at
  const payoutColumns = [
    'o.platform_order_id',
    'o.kind',
    'o.status',
    'o.amount',
    'o.bank',
    'o.account_no',
    'o.account_name',
    'o.connector',
    'm.merchant_id',
    'm.name as merchant_name',
  ]
  const waiting = await db
    .from('payout_confirmations as p')
    .join('payout_orders as o', 'o.id', 'p.payout_order_id')
    .join('merchants as m', 'm.id', 'o.merchant_id')
    .whereNull('p.statement_line_id')
    .where('o.amount', amount)
    .orderByRaw('ABS(TIMESTAMPDIFF(SECOND, p.created_at, ?))', [lineAt])
    .limit(10)
    .select(...payoutColumns, 'p.path', 'p.created_at as sent_at')
  const pending = await db
    .from('payout_orders as o')
    .join('merchants as m', 'm.id', 'o.merchant_id')
    .whereIn('o.kind', ['withdraw', 'settlement'])
    .where('o.amount', amount)
    .where('o.status', 'pending')
    .orderByRaw('ABS(TIMESTAMPDIFF(SECOND, o.order_at, ?))', [lineAt])
    .limit(10)
    .select(...payoutColumns, 'o.order_at')
  const returns = await db
    .from('payout_confirmations as p')
    .join('statement_lines as r', 'r.id', 'p.returned_line_id')
    .where('p.path', 'return')
    .whereNull('p.statement_line_id')
    .where('p.deposit_account_id', line.deposit_account_id)
    .where('p.amount', amount)
    .orderByRaw('ABS(TIMESTAMPDIFF(SECOND, p.created_at, ?))', [lineAt])
    .limit(10)
    .select(
      'p.created_at as returned_at',
      'p.actor',
      'r.id as returned_line_id',
      'r.line_at',
      'r.return_bank',
      'r.return_account_no',
      'r.return_account_name'
    )
  const kindWord = (kind: string) => (kind === 'settlement' ? 'settlement' : 'withdrawal')
  const payee = (row: Record<string, any>) =>
    `${row.merchant_id} · ${row.merchant_name} → ${row.bank} ${row.account_no} (${row.account_name})`
  return [
    ...waiting.map((row) => ({
      kind: 'waiting' as const,
      field: 'platform_order_id' as const,
      value: row.platform_order_id as string,
      label: row.platform_order_id as string,
      href: `/admin/orders/${row.platform_order_id}`,
      status: `${row.status} (${row.path})`,
      amount: formatThb(Number(row.amount)),
      time: formatGatewayDateTime(row.sent_at),
      who: payee(row),
      why: `${kindWord(row.kind)} sent, waiting for its debit line since ${formatGatewayDateTime(row.sent_at)}`,
    })),
    ...pending.map((row) => ({
      kind: 'pending' as const,
      field: 'platform_order_id' as const,
      value: row.platform_order_id as string,
      label: row.platform_order_id as string,
      href: `/admin/orders/${row.platform_order_id}`,
      status: `${row.status} (${row.connector})`,
      amount: formatThb(Number(row.amount)),
      time: formatGatewayDateTime(row.order_at),
      who: payee(row),
      why: `${kindWord(row.kind)} pending at the bank: confirming completes it`,
    })),
    ...returns.map((row) => ({
      kind: 'return' as const,
      field: 'returned_line_id' as const,
      value: String(row.returned_line_id),
      label: `line #${row.returned_line_id}`,
      href: `/admin/review/lines/${row.returned_line_id}`,
      status: 'returned',
      amount: formatThb(amount),
      time: formatGatewayDateTime(row.returned_at),
      who: `${row.return_bank} ${row.return_account_no} (${row.return_account_name})`,
      why: `credit of ${formatGatewayDateTime(row.line_at)} returned to its payer by ${row.actor}, waiting for its debit on this account`,
    })),
  ]
}
