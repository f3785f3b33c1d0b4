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
 * checks in code, make a second claim impossible: on a line, on a bank
 * transfer (trans_ref: the slip's, and on a line the bank's reference of
 * the line, whichever account it arrived on), on an order.
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
 * The bank's transaction reference of a statement line `alias`, as SQL
 * (docs/reconciliation.md, "One transfer, one line"): the one its
 * transfer_key names, or a trans_ref that is not only a copy of the line's
 * own reference (formats without a bank reference copy it there). NULL
 * when the bank gave none.
 */
export function bankReferenceSql(alias: string) {
  return `CASE WHEN ${alias}.trans_ref IS NOT NULL AND (${alias}.transfer_key LIKE 'ref|%' OR NOT (${alias}.reference <=> ${alias}.trans_ref)) THEN ${alias}.trans_ref END`
}

/** bankReferenceSql on a line read into memory (transfer_key, when it was read). */
export function bankReference(line: {
  trans_ref: string | null
  reference: string | null
  transfer_key?: string | null
}) {
  if (line.trans_ref === null) return null
  if (line.transfer_key?.startsWith('ref|')) return line.trans_ref
  return line.trans_ref === line.reference ? null : line.trans_ref
}

/** The bank references of these lines (in the caller's transaction), by line id. */
async function bankReferencesOf(client: QueryClientContract, lineIds: number[]) {
  const references = new Map<number, string | null>()
  if (lineIds.length === 0) return references
  const [rows] = await client.rawQuery(
    `SELECT l.id, ${bankReferenceSql('l')} AS bank_ref FROM statement_lines l
      WHERE l.id IN (${lineIds.map(() => '?').join(', ')})`,
    lineIds
  )
  for (const row of rows as Array<{ id: number | string; bank_ref: string | null }>) {
    references.set(Number(row.id), row.bank_ref)
  }
  return references
}

/**
 * Each claim that takes a line carries the line's bank transfer: another
 * claim holding it (on any account, a slip's receivable included) then
 * fails the INSERT on the key, as a second claim on the line does. A slip
 * naming another transfer than its line's is not that line's slip.
 */
async function withTransfers(
  client: QueryClientContract,
  claims: NewClaim[],
  field: string | null
) {
  const references = await bankReferencesOf(
    client,
    claims.flatMap((claim) => (claim.statementLineId === null ? [] : [claim.statementLineId]))
  )
  return claims.map((claim) => {
    const bankRef =
      claim.statementLineId === null
        ? null
        : (references.get(Number(claim.statementLineId)) ?? null)
    if (!bankRef) return claim
    if (claim.transRef && claim.transRef !== bankRef) {
      throw new ActionError([
        {
          field,
          message:
            `${claim.slipId ? `slip ${claim.slipId} names` : 'the slip names'} the transfer ${claim.transRef}, ` +
            `but statement line #${claim.statementLineId} is the transfer ${bankRef}: the slip is not this line's, nothing was credited`,
        },
      ])
    }
    return { ...claim, transRef: bankRef }
  })
}

/**
 * Writes claims in one INSERT, in the transaction that credits (or
 * returns) the money. A receipt, a bank transfer (a slip's, or the line's
 * own bank reference) or an order that another decision already took
 * fails the INSERT on its unique key; the caller's transaction rolls back
 * and `ReceiptClaimedError` names the decision that took it.
 */
export async function insertClaims(
  trx: TransactionClientContract,
  claims: NewClaim[],
  field: string | null = null
): Promise<void> {
  if (claims.length === 0) return
  const carrying = await withTransfers(trx, claims, field)
  const row = `(${COLUMNS.map(() => '?').join(', ')})`
  try {
    await trx.rawQuery(
      `INSERT INTO receipt_claims (${COLUMNS.join(', ')}) VALUES ${carrying.map(() => row).join(', ')}`,
      carrying.flatMap(claimValues) as any[]
    )
  } catch (error) {
    throw await claimedError(trx, error, carrying, field)
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

type ClaimKeys = Pick<NewClaim, 'statementLineId' | 'transRef' | 'paymentOrderId'>

/**
 * A write that failed on a unique key of receipt_claims: the refusal naming
 * the decision that holds the key (the rest of the transaction stands, so
 * it can be read). Any other error is returned as it is.
 */
async function claimedError(
  client: QueryClientContract,
  error: unknown,
  claims: ClaimKeys[],
  field: string | null
) {
  const key = duplicateKeyName(error)
  if (!key?.startsWith('receipt_claims_')) return error
  const taken = await claimHoldingKey(client, key, claims)
  if (!taken) return error
  return new ReceiptClaimedError(await describeClaim(client, taken.claim), taken.what, field)
}

async function claimHoldingKey(client: QueryClientContract, key: string, claims: ClaimKeys[]) {
  const lookups: Array<[string, string, (claim: ClaimKeys) => unknown, (value: any) => string]> = [
    [
      'receipt_claims_statement_line_id_unique',
      'statement_line_id',
      (claim) => claim.statementLineId,
      (value) => `statement line #${value}`,
    ],
    [
      'receipt_claims_held_trans_ref_unique',
      'held_trans_ref',
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
      // A legacy late credit of an order another claim holds names no order (migration 140).
      return order
        ? `credited before the upgrade to ${order}`
        : `credited to merchant ${merchant} before the upgrade`
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

/**
 * The claim holding the bank transfer of line `lineId` (its bank
 * reference), other than the line's own claim and an open receivable on
 * the line's account (the receivable this line clears): one transfer's
 * money another decision took, on this account or another.
 */
export async function transferClaimOfLine(client: QueryClientContract, lineId: number) {
  const [rows] = await client.rawQuery(
    `SELECT c.* FROM statement_lines l
       JOIN receipt_claims c ON c.held_trans_ref = ${bankReferenceSql('l')}
      WHERE l.id = ? AND NOT (c.statement_line_id <=> l.id)
        AND NOT (c.statement_line_id IS NULL AND c.deposit_account_id = l.deposit_account_id)
      ORDER BY c.id LIMIT 1`,
    [lineId]
  )
  const row = (rows as Array<Record<string, any>>)[0]
  return row ? toClaim(row) : null
}

/** Refuses a line another decision took, or whose bank transfer another decision took, naming it. */
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
  const transfer = await transferClaimOfLine(client, lineId)
  if (transfer) {
    throw new ReceiptClaimedError(
      await describeClaim(client, transfer),
      `the transfer ${transfer.transRef} of statement line #${lineId}`,
      field
    )
  }
}

/**
 * The claims holding these bank transfers (not reversed), by trans_ref,
 * with their orders' ids: read as committed (the unique key stops a claim
 * written meanwhile).
 */
export async function claimsOfTransfers(client: QueryClientContract, transRefs: string[]) {
  const held = new Map<string, ReceiptClaim & { platformOrderId: string | null }>()
  if (transRefs.length === 0) return held
  const rows = await client
    .from('receipt_claims as c')
    .leftJoin('payment_orders as o', 'o.id', 'c.payment_order_id')
    .whereIn('c.held_trans_ref', [...new Set(transRefs)])
    .select('c.*', 'o.platform_order_id')
  for (const row of rows) {
    held.set(row.trans_ref, { ...toClaim(row), platformOrderId: row.platform_order_id ?? null })
  }
  return held
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
 * that posts receivable_cleared. It takes the line's bank transfer too
 * when it named none (a payment marked paid without a slip); a slip's
 * receivable naming another transfer than the line's is refused.
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
  const references = await bankReferencesOf(
    trx,
    clearings.map((clearing) => clearing.lineId)
  )
  for (const clearing of clearings) {
    const bankRef = references.get(Number(clearing.lineId)) ?? null
    if (bankRef) await assertSameTransfer(trx, clearing.claimId, clearing.lineId, bankRef)
    const corrected = clearing.credit
      ? ", credited = ?, fee = ?, amount_policy = 'credit_received'"
      : ''
    let result: { affectedRows: number }
    try {
      ;[result] = await trx.rawQuery(
        `UPDATE receipt_claims SET statement_line_id = ?, trans_ref = COALESCE(trans_ref, ?),
           received_amount = ?, cleared_at = ?${corrected}
          WHERE id = ? AND statement_line_id IS NULL AND reversed_at IS NULL`,
        [
          clearing.lineId,
          bankRef,
          clearing.amount,
          now,
          ...(clearing.credit ? [clearing.credit.credited, clearing.credit.fee] : []),
          clearing.claimId,
        ] as any[]
      )
    } catch (error) {
      throw await claimedError(
        trx,
        error,
        [{ statementLineId: clearing.lineId, transRef: bankRef, paymentOrderId: null }],
        null
      )
    }
    if (Number(result.affectedRows) !== 1) {
      throw ActionError.general(
        `the receivable ${clearing.claimId} was cleared by another line, or reversed, meanwhile`
      )
    }
  }
}

/** A receivable opened on a slip's transfer is cleared by that transfer's line only. */
async function assertSameTransfer(
  trx: TransactionClientContract,
  claimId: number,
  lineId: number,
  bankRef: string
) {
  const row = await trx
    .from('receipt_claims as c')
    .leftJoin('payment_orders as o', 'o.id', 'c.payment_order_id')
    .where('c.id', claimId)
    .select('c.trans_ref', 'c.slip_id', 'o.platform_order_id')
    .first()
  if (!row?.trans_ref || row.trans_ref === bankRef) return
  const owner = row.platform_order_id ?? `the receivable ${claimId}`
  const slip = row.slip_id ? ` (slip ${row.slip_id})` : ''
  throw ActionError.general(
    `${owner} was credited for the transfer ${row.trans_ref}${slip}, but statement line #${lineId} ` +
      `is the transfer ${bankRef}: it is not that receivable's line`
  )
}
