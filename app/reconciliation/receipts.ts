import type { QueryClientContract, TransactionClientContract } from '@adonisjs/lucid/types/database'
import { ActionError } from '#core/validation'
import { duplicateKeyName } from '#core/sql_batch'
import { formatGatewayDateTime } from '#core/clock'
import type { Actor } from '#core/actor'

/**
 * Bank receipts and their claims (docs/reconciliation.md, "Bank money in the
 * ledger"). Every merchant credit from a deposit, and every return to the
 * payer, is a row of receipt_claims naming the statement line it took; a
 * credit decided before its line exists is a row without a line, an open
 * receivable, which the line clears when it arrives. The unique keys, not
 * checks in code, make a second claim impossible: on a line, on a slip's
 * transaction, on an order.
 */

/** The path that took the money, in the spec's and the back-office's words. */
export const CLAIM_PATHS = [
  'match',
  'attach',
  'late_credit',
  'merchant_credit',
  'return',
  'slip_approval',
  'mark_paid',
  'upgrade',
  'payout_return',
] as const
export type ClaimPath = (typeof CLAIM_PATHS)[number]

export type AmountPolicy = 'exact' | 'credit_received'

export interface ReceiptClaim {
  id: number
  depositAccountId: number
  statementLineId: number | null
  transRef: string | null
  paymentOrderId: number | null
  merchantId: number | null
  path: ClaimPath
  amountPolicy: AmountPolicy
  expectedAmount: number
  receivedAmount: number | null
  credited: number
  fee: number
  expectedFrom: Date | null
  expectedTo: Date | null
  slipId: number | null
  approvalRequestId: number | null
  ledgerTransactionId: number | null
  actor: string
  claimedAt: Date
  clearedAt: Date | null
  /** A receivable whose line never came: its credit was taken back. */
  reversedAt: Date | null
}

export function toClaim(row: Record<string, any>): ReceiptClaim {
  const id = (value: unknown) => (value === null || value === undefined ? null : Number(value))
  const at = (value: unknown) => (value ? new Date(value as string) : null)
  return {
    id: Number(row.id),
    depositAccountId: Number(row.deposit_account_id),
    statementLineId: id(row.statement_line_id),
    transRef: row.trans_ref ?? null,
    paymentOrderId: id(row.payment_order_id),
    merchantId: id(row.merchant_id),
    path: row.path,
    amountPolicy: row.amount_policy,
    expectedAmount: Number(row.expected_amount),
    receivedAmount: id(row.received_amount),
    credited: Number(row.credited),
    fee: Number(row.fee),
    expectedFrom: at(row.expected_from),
    expectedTo: at(row.expected_to),
    slipId: id(row.slip_id),
    approvalRequestId: id(row.approval_request_id),
    ledgerTransactionId: id(row.ledger_transaction_id),
    actor: row.actor,
    claimedAt: new Date(row.claimed_at),
    clearedAt: at(row.cleared_at),
    reversedAt: at(row.reversed_at),
  }
}

/** A claim to write: a line's receipt taken, or (no line) a receivable opened. */
export interface NewClaim {
  depositAccountId: number
  /** The receipt taken; null opens a receivable. */
  statementLineId: number | null
  path: ClaimPath
  actor: Actor
  transRef?: string | null
  paymentOrderId?: number | null
  merchantId?: number | null
  amountPolicy?: AmountPolicy
  /** What the bank is to receive (a receivable) or received (the line's amount). */
  expectedAmount: number
  credited?: number
  fee?: number
  expectedFrom?: Date | null
  expectedTo?: Date | null
  slipId?: number | null
  approvalRequestId?: number | null
  ledgerTransactionId?: number | null
  now?: Date
}

const COLUMNS = [
  'deposit_account_id',
  'statement_line_id',
  'trans_ref',
  'payment_order_id',
  'merchant_id',
  'path',
  'amount_policy',
  'expected_amount',
  'received_amount',
  'credited',
  'fee',
  'expected_from',
  'expected_to',
  'slip_id',
  'approval_request_id',
  'ledger_transaction_id',
  'actor',
  'claimed_at',
  'cleared_at',
]

function claimValues(claim: NewClaim) {
  const now = claim.now ?? new Date()
  const claimed = claim.statementLineId !== null
  return [
    claim.depositAccountId,
    claim.statementLineId,
    claim.transRef ?? null,
    claim.paymentOrderId ?? null,
    claim.merchantId ?? null,
    claim.path,
    claim.amountPolicy ?? 'exact',
    claim.expectedAmount,
    claimed ? claim.expectedAmount : null,
    claim.credited ?? 0,
    claim.fee ?? 0,
    claim.expectedFrom ?? null,
    claim.expectedTo ?? null,
    claim.slipId ?? null,
    claim.approvalRequestId ?? null,
    claim.ledgerTransactionId ?? null,
    claim.actor.name.slice(0, 120),
    now,
    claimed ? now : null,
  ]
}

/**
 * Writes claims in one INSERT, in the transaction that credits (or
 * returns) the money. A receipt, a slip's transaction or an order that
 * another decision already took fails the INSERT on its unique key; the
 * caller's transaction rolls back and `ReceiptClaimedError` names the
 * decision that took it.
 */
export async function insertClaims(
  trx: TransactionClientContract,
  claims: NewClaim[],
  field: string | null = null
): Promise<void> {
  if (claims.length === 0) return
  const row = `(${COLUMNS.map(() => '?').join(', ')})`
  try {
    await trx.rawQuery(
      `INSERT INTO receipt_claims (${COLUMNS.join(', ')}) VALUES ${claims.map(() => row).join(', ')}`,
      claims.flatMap(claimValues) as any[]
    )
  } catch (error) {
    const key = duplicateKeyName(error)
    if (!key?.startsWith('receipt_claims_')) throw error
    // The INSERT failed, the rest of the transaction stands: read who holds the key.
    const taken = await claimHoldingKey(trx, key, claims)
    if (!taken) throw error
    throw new ReceiptClaimedError(await describeClaim(trx, taken.claim), taken.what, field)
  }
}

/** One claim, as insertClaims writes it. */
export function insertClaim(
  trx: TransactionClientContract,
  claim: NewClaim,
  field: string | null = null
) {
  return insertClaims(trx, [claim], field)
}

async function claimHoldingKey(client: QueryClientContract, key: string, claims: NewClaim[]) {
  const lookups: Array<[string, string, (claim: NewClaim) => unknown, (value: any) => string]> = [
    [
      'receipt_claims_statement_line_id_unique',
      'statement_line_id',
      (claim) => claim.statementLineId,
      (value) => `statement line #${value}`,
    ],
    [
      'receipt_claims_trans_ref_unique',
      'trans_ref',
      (claim) => claim.transRef,
      (value) => `the transfer ${value}`,
    ],
    [
      'receipt_claims_payment_order_id_unique',
      'payment_order_id',
      (claim) => claim.paymentOrderId,
      () => 'the payment',
    ],
  ]
  const lookup = lookups.find(([name]) => name === key)
  if (!lookup) return null
  const [, column, valueOf, what] = lookup
  const values = claims.map(valueOf).filter((value) => value !== null && value !== undefined)
  if (values.length === 0) return null
  const row = await client
    .from('receipt_claims')
    .whereIn(column, values as any[])
    .orderBy('id')
    .first()
  return row ? { claim: toClaim(row), what: what(row[column]) } : null
}

/** What a claim did, in words an operator reads: "slip 5 of DMOP… approved by …". */
export interface ClaimDescription {
  claim: ReceiptClaim
  platformOrderId: string | null
  merchantPublicId: string | null
  text: string
}

/** What the decision of a claim did, in the operators' words. */
function whatItDid(claim: ReceiptClaim, order: string | null, merchant: string | null) {
  switch (claim.path) {
    case 'match':
      return `matched automatically to ${order}`
    case 'attach':
      return `attached by an operator to ${order}`
    case 'late_credit':
      return `credited as the late payment of ${order}`
    case 'merchant_credit':
      return `credited to merchant ${merchant}`
    case 'return':
      return 'returned to the payer'
    case 'slip_approval':
      return `slip ${claim.slipId} of ${order} approved`
    case 'mark_paid':
      return `${order} marked paid`
    case 'upgrade':
      return `credited before the upgrade to ${order}`
    case 'payout_return':
      return `a payout's transfer returned by the bank, its hold given back to merchant ${merchant}`
  }
}

export async function describeClaim(
  client: QueryClientContract,
  claim: ReceiptClaim
): Promise<ClaimDescription> {
  const order = claim.paymentOrderId
    ? await client
        .from('payment_orders')
        .where('id', claim.paymentOrderId)
        .select('platform_order_id')
        .first()
    : null
  const merchant = claim.merchantId
    ? await client.from('merchants').where('id', claim.merchantId).select('merchant_id').first()
    : null
  const platformOrderId: string | null = order?.platform_order_id ?? null
  const merchantPublicId: string | null = merchant?.merchant_id ?? null
  const what = whatItDid(claim, platformOrderId, merchantPublicId)
  const by = claim.path === 'match' ? '' : ` by ${claim.actor}`
  const request = claim.approvalRequestId ? ` (approval request #${claim.approvalRequestId})` : ''
  const when = formatGatewayDateTime(claim.claimedAt)
  const line =
    claim.statementLineId === null
      ? ', its bank line not yet received'
      : `, statement line #${claim.statementLineId}`
  return {
    claim,
    platformOrderId,
    merchantPublicId,
    text: `${what}${by}${request} at ${when}${line}`,
  }
}

/**
 * A receipt (a line, a slip's transfer, an order's credit) another decision
 * already took: nothing was written, and the message says which decision
 * took the money.
 */
export class ReceiptClaimedError extends ActionError {
  constructor(
    public taken: ClaimDescription,
    what: string,
    field: string | null
  ) {
    super([{ field, message: `${what} was already claimed: ${taken.text}` }])
    this.name = 'ReceiptClaimedError'
  }
}

/** The claim on a statement line, if any. */
export async function claimOfLine(client: QueryClientContract, lineId: number) {
  const row = await client.from('receipt_claims').where('statement_line_id', lineId).first()
  return row ? toClaim(row) : null
}

/** The claim that credited a payment order, if any; locked (FOR UPDATE) with `lock`. */
export async function claimOfOrder(
  client: QueryClientContract,
  paymentOrderId: number,
  options: { lock?: boolean } = {}
) {
  const query = client.from('receipt_claims').where('payment_order_id', paymentOrderId)
  const row = options.lock ? await query.forUpdate().first() : await query.first()
  return row ? toClaim(row) : null
}

/** Refuses a line another decision took, naming it. */
export async function assertLineUnclaimed(
  client: QueryClientContract,
  lineId: number,
  field: string | null = null
) {
  const claim = await claimOfLine(client, lineId)
  if (claim) {
    throw new ReceiptClaimedError(
      await describeClaim(client, claim),
      `statement line #${lineId}`,
      field
    )
  }
}

/**
 * The open receivables of these deposit accounts (credits still waiting for
 * their line), with their orders' ids; locked with `lock` (in a
 * transaction), so that a line clears one at most once.
 */
export async function openReceivables(
  client: QueryClientContract,
  accountIds: number[],
  options: { lock: boolean }
) {
  if (accountIds.length === 0) return []
  const query = client
    .from('receipt_claims as c')
    .leftJoin('payment_orders as o', 'o.id', 'c.payment_order_id')
    .whereIn('c.deposit_account_id', accountIds)
    .whereNull('c.statement_line_id')
    .whereNull('c.reversed_at')
    .orderBy('c.id')
    .select('c.*', 'o.platform_order_id', 'o.payment_reference', 'o.status as order_status')
  if (options.lock) query.forUpdate()
  const rows = await query
  return rows.map((row: Record<string, any>) => ({
    ...toClaim(row),
    platformOrderId: row.platform_order_id as string | null,
    paymentReference: row.payment_reference as string | null,
    orderStatus: row.order_status as string,
  }))
}

export type OpenReceivable = Awaited<ReturnType<typeof openReceivables>>[number]

/**
 * A line clears a receivable: the claim takes the line (only while it has
 * none: the unique key and the condition together), in the transaction
 * that posts receivable_cleared.
 */
export async function clearReceivables(
  trx: TransactionClientContract,
  clearings: Array<{
    claimId: number
    lineId: number
    amount: number
    /** The credit corrected to what the line received (amount policy credit_received). */
    credit?: { credited: number; fee: number }
  }>,
  now = new Date()
) {
  for (const clearing of clearings) {
    const corrected = clearing.credit
      ? ", credited = ?, fee = ?, amount_policy = 'credit_received'"
      : ''
    const [result] = await trx.rawQuery(
      `UPDATE receipt_claims SET statement_line_id = ?, received_amount = ?, cleared_at = ?${corrected}
        WHERE id = ? AND statement_line_id IS NULL AND reversed_at IS NULL`,
      [
        clearing.lineId,
        clearing.amount,
        now,
        ...(clearing.credit ? [clearing.credit.credited, clearing.credit.fee] : []),
        clearing.claimId,
      ]
    )
    if (Number(result.affectedRows) !== 1) {
      throw ActionError.general(
        `the receivable ${clearing.claimId} was cleared by another line, or reversed, meanwhile`
      )
    }
  }
}
