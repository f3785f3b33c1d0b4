import type { QueryClientContract, TransactionClientContract } from '@adonisjs/lucid/types/database'
import { ActionError } from '#core/validation'
import { duplicateKeyName } from '#core/sql_batch'
import { formatGatewayDateTime } from '#core/clock'
import type { Actor } from '#core/actor'

/**
 * Money out, tied to the bank (docs/reconciliation.md, "Money out"): every
 * transfer the gateway made or must make (a payout that succeeded, a line
 * returned to the payer) is a row of payout_confirmations, confirmed by the
 * debit line that shows the money left the bank. The unique key on the line
 * makes a debit confirm one transfer; a row without a line is an open item
 * until its line arrives. A debit nothing claims is an exception an
 * operator explains (a bank charge), with a row of its own.
 */

export type ConfirmationPath = 'bank_line' | 'connector' | 'by_hand' | 'return' | 'bank_charge'

export interface PayoutConfirmation {
  id: number
  path: ConfirmationPath
  payoutOrderId: number | null
  returnedLineId: number | null
  statementLineId: number | null
  depositAccountId: number | null
  amount: number
  actor: string
  reason: string | null
  createdAt: Date
  confirmedAt: Date | null
}

export function toConfirmation(row: Record<string, any>): PayoutConfirmation {
  const id = (value: unknown) => (value === null || value === undefined ? null : Number(value))
  return {
    id: Number(row.id),
    path: row.path,
    payoutOrderId: id(row.payout_order_id),
    returnedLineId: id(row.returned_line_id),
    statementLineId: id(row.statement_line_id),
    depositAccountId: id(row.deposit_account_id),
    amount: Number(row.amount),
    actor: row.actor,
    reason: row.reason ?? null,
    createdAt: new Date(row.created_at),
    confirmedAt: row.confirmed_at ? new Date(row.confirmed_at) : null,
  }
}

/** A debit line another transfer (or an operator's explanation) already accounts for. */
export class DebitAlreadyConfirmedError extends ActionError {
  constructor(lineId: number, confirmation: PayoutConfirmation) {
    super([
      {
        field: null,
        message: `statement line #${lineId} already confirms ${describeConfirmation(confirmation)}`,
      },
    ])
    this.name = 'DebitAlreadyConfirmedError'
  }
}

export function describeConfirmation(confirmation: PayoutConfirmation) {
  const when = formatGatewayDateTime(confirmation.confirmedAt ?? confirmation.createdAt)
  if (confirmation.path === 'bank_charge') {
    return `a debit explained by ${confirmation.actor} at ${when} (${confirmation.reason ?? 'no reason'})`
  }
  if (confirmation.returnedLineId !== null) {
    return `the return of statement line #${confirmation.returnedLineId} (${when})`
  }
  return `payout order ${confirmation.payoutOrderId} (${when})`
}

/**
 * A payout succeeded: what left (or is to leave) the bank, in the
 * transaction that consumes its hold. With the debit line that confirmed it
 * (a bulk-file payout's statement), confirmed at once; otherwise (the bank's
 * API, an operator) an open item until its line arrives.
 */
export async function recordPayoutSent(
  trx: TransactionClientContract,
  sent: {
    payoutOrderId: number
    amount: number
    path: Exclude<ConfirmationPath, 'return' | 'bank_charge'>
    actor: Actor
    line?: { id: number; depositAccountId: number } | null
  }
) {
  const now = new Date()
  await insertConfirmation(trx, {
    path: sent.path,
    payout_order_id: sent.payoutOrderId,
    returned_line_id: null,
    statement_line_id: sent.line?.id ?? null,
    deposit_account_id: sent.line?.depositAccountId ?? null,
    amount: sent.amount,
    actor: sent.actor.name.slice(0, 120),
    reason: null,
    created_at: now,
    confirmed_at: sent.line ? now : null,
  })
}

/** A line returned to the payer: its transfer out of the same account is an open item. */
export async function recordReturnToSend(
  trx: TransactionClientContract,
  returned: { lineId: number; depositAccountId: number; amount: number; actor: Actor }
) {
  await insertConfirmation(trx, {
    path: 'return',
    payout_order_id: null,
    returned_line_id: returned.lineId,
    statement_line_id: null,
    deposit_account_id: returned.depositAccountId,
    amount: returned.amount,
    actor: returned.actor.name.slice(0, 120),
    reason: null,
    created_at: new Date(),
    confirmed_at: null,
  })
}

/** A debit an operator accounts for (a bank charge, a fee): confirmed by its own line. */
export async function recordExplainedDebit(
  trx: TransactionClientContract,
  debit: { lineId: number; depositAccountId: number; amount: number; actor: Actor; reason: string }
) {
  const now = new Date()
  await insertConfirmation(trx, {
    path: 'bank_charge',
    payout_order_id: null,
    returned_line_id: null,
    statement_line_id: debit.lineId,
    deposit_account_id: debit.depositAccountId,
    amount: debit.amount,
    actor: debit.actor.name.slice(0, 120),
    reason: debit.reason,
    created_at: now,
    confirmed_at: now,
  })
}

async function insertConfirmation(trx: TransactionClientContract, row: Record<string, unknown>) {
  try {
    await trx.table('payout_confirmations').insert(row)
  } catch (error) {
    if (duplicateKeyName(error) !== 'payout_confirmations_statement_line_id_unique') throw error
    const lineId = Number(row.statement_line_id)
    throw new DebitAlreadyConfirmedError(lineId, (await confirmationOfLine(trx, lineId))!)
  }
}

/** The confirmation a debit line gives, if any. */
export async function confirmationOfLine(client: QueryClientContract, lineId: number) {
  const row = await client.from('payout_confirmations').where('statement_line_id', lineId).first()
  return row ? toConfirmation(row) : null
}

/** The confirmation of a payout order, if it succeeded. */
export async function confirmationOfPayout(client: QueryClientContract, payoutOrderId: number) {
  const row = await client
    .from('payout_confirmations')
    .where('payout_order_id', payoutOrderId)
    .first()
  return row ? toConfirmation(row) : null
}

/**
 * Open items a debit line could confirm: those of these payouts, and the
 * returns waiting on these accounts; locked with `lock`.
 */
export async function openConfirmations(
  client: QueryClientContract,
  scope: { payoutOrderIds: number[]; accountIds: number[] },
  options: { lock: boolean }
) {
  if (scope.payoutOrderIds.length === 0 && scope.accountIds.length === 0) return []
  const query = client
    .from('payout_confirmations')
    .whereNull('statement_line_id')
    .where((where) => {
      if (scope.payoutOrderIds.length > 0) where.whereIn('payout_order_id', scope.payoutOrderIds)
      if (scope.accountIds.length > 0) {
        where.orWhere((returns) =>
          returns.where('path', 'return').whereIn('deposit_account_id', scope.accountIds)
        )
      }
    })
    .orderBy('id')
  if (options.lock) query.forUpdate()
  return (await query).map(toConfirmation)
}

/**
 * A debit line confirms an open item: only while it has no line (the
 * condition and the unique key together), in the caller's transaction.
 */
export async function confirmWithLine(
  trx: TransactionClientContract,
  confirmation: PayoutConfirmation,
  line: { id: number; deposit_account_id: number }
) {
  const now = new Date()
  let result: { affectedRows: number }
  try {
    ;[result] = await trx.rawQuery(
      `UPDATE payout_confirmations SET statement_line_id = ?, deposit_account_id = ?, confirmed_at = ?
        WHERE id = ? AND statement_line_id IS NULL`,
      [line.id, line.deposit_account_id, now, confirmation.id]
    )
  } catch (error) {
    if (duplicateKeyName(error) !== 'payout_confirmations_statement_line_id_unique') throw error
    throw new DebitAlreadyConfirmedError(line.id, (await confirmationOfLine(trx, line.id))!)
  }
  if (Number(result.affectedRows) !== 1) {
    throw ActionError.general(
      `${describeConfirmation(confirmation)} was confirmed by another debit line meanwhile`
    )
  }
  confirmation.statementLineId = line.id
  confirmation.depositAccountId = line.deposit_account_id
  confirmation.confirmedAt = now
}
