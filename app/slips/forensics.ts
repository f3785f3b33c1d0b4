import db from '@adonisjs/lucid/services/db'
import type { ReferenceUse } from '#slips/verification'
import type { ClaimedOrder } from '#slips/verifiers/slip_verifier'

/** How many sightings of each kind are kept on a slip: enough for operators to see a pattern. */
const LIMIT = 20

/** Another slip with the same image or the same transaction reference. */
export interface SlipSighting {
  slip_id: number
  payment_order_id: number
  platform_order_id: string
  merchant_id: string
  source: string
  uploaded_at: string
  verification_status: string
}

/** A statement line whose transaction reference is the slip's. */
export interface LineSighting {
  statement_line_id: number
  deposit_account_id: number
  amount: number
  line_at: string
  status: string
  order_type: ClaimedOrder['orderType'] | null
  order_id: number | null
  /** The order as operators know it (absent on sightings stored before it was kept). */
  platform_order_id?: string | null
  merchant_id?: string | null
}

/**
 * A line's order by its platform_order_id and merchant: a payment's or a
 * payout's, whichever the line's order_type names (at most one joins).
 */
function withLineOrder(query: ReturnType<typeof db.from>) {
  return query
    .leftJoin('payment_orders as lp', (join) =>
      join.on('lp.id', 'statement_lines.order_id').andOnVal('statement_lines.order_type', 'payment')
    )
    .leftJoin('payout_orders as lw', (join) =>
      join
        .on('lw.id', 'statement_lines.order_id')
        .andOnVal('statement_lines.order_type', '<>', 'payment')
    )
    .leftJoin('merchants as lm', 'lm.id', db.raw('COALESCE(lp.merchant_id, lw.merchant_id)'))
    .select(
      db.raw('COALESCE(lp.platform_order_id, lw.platform_order_id) AS order_platform_id'),
      'lm.merchant_id as order_merchant_id'
    )
}

const lineOrder = (line: Record<string, any>) => ({
  platform_order_id: line.order_platform_id ? String(line.order_platform_id).trim() : null,
  merchant_id: (line.order_merchant_id as string | null) ?? null,
})

export interface Forensics {
  same_image: SlipSighting[]
  same_trans_ref: SlipSighting[]
  statement_lines: LineSighting[]
}

function slipsWhere(column: 'sha256' | 'trans_ref', value: string, excludeSlipId: number | null) {
  const query = db
    .from('payment_slips')
    .join('payment_orders', 'payment_orders.id', 'payment_slips.payment_order_id')
    .join('merchants', 'merchants.id', 'payment_slips.merchant_id')
    .where(`payment_slips.${column}`, value)
    .orderBy('payment_slips.id')
    .limit(LIMIT)
    .select(
      'payment_slips.id',
      'payment_slips.payment_order_id',
      'payment_orders.platform_order_id',
      'merchants.merchant_id',
      'payment_slips.source',
      'payment_slips.created_at',
      'payment_slips.verification_status'
    )
  if (excludeSlipId !== null) query.whereNot('payment_slips.id', excludeSlipId)
  return query
}

function sighting(row: Record<string, any>): SlipSighting {
  return {
    slip_id: Number(row.id),
    payment_order_id: Number(row.payment_order_id),
    platform_order_id: row.platform_order_id,
    merchant_id: row.merchant_id,
    source: row.source,
    uploaded_at: new Date(row.created_at).toISOString(),
    verification_status: row.verification_status,
  }
}

/**
 * Where else the slip has been seen: the same image (sha256) or the same
 * transaction reference on other slips, of any order and any merchant, and
 * statement lines carrying the transaction reference on any account. Slip reuse is the
 * commonest fraud; operators see these next to the slip.
 */
export async function slipForensics(
  sha256: string,
  transRef: string | null,
  excludeSlipId: number | null = null
): Promise<Forensics> {
  const sameImage = (await slipsWhere('sha256', sha256, excludeSlipId)).map(sighting)
  if (!transRef) return { same_image: sameImage, same_trans_ref: [], statement_lines: [] }
  const sameTransRef = (await slipsWhere('trans_ref', transRef, excludeSlipId)).map(sighting)
  const lines = await withLineOrder(db.from('statement_lines'))
    .where('statement_lines.trans_ref', transRef)
    .orderBy('statement_lines.id')
    .limit(LIMIT)
    .select(
      'statement_lines.id',
      'statement_lines.deposit_account_id',
      'statement_lines.amount',
      'statement_lines.line_at',
      'statement_lines.status',
      'statement_lines.order_type',
      'statement_lines.order_id'
    )
  return {
    same_image: sameImage,
    same_trans_ref: sameTransRef,
    statement_lines: lines.map((line) => ({
      statement_line_id: Number(line.id),
      deposit_account_id: Number(line.deposit_account_id),
      amount: Number(line.amount),
      line_at: new Date(line.line_at).toISOString(),
      status: line.status,
      order_type: line.order_type,
      order_id: line.order_id === null ? null : Number(line.order_id),
      ...lineOrder(line),
    })),
  }
}

/**
 * The orders the transaction reference already belongs to, as the rules read
 * them. When a slip is checked again, only slips uploaded before it count: a
 * later upload of the same slip elsewhere is that upload's reuse.
 */
export function referenceUses(forensics: Forensics, slipId: number | null = null): ReferenceUse[] {
  return [
    ...forensics.same_trans_ref
      .filter((slip) => slipId === null || slip.slip_id < slipId)
      .map((slip): ReferenceUse => ({
        kind: 'slip',
        order: { orderType: 'payment', orderId: slip.payment_order_id },
      })),
    ...forensics.statement_lines
      .filter((line) => line.order_type !== null && line.order_id !== null)
      .map((line): ReferenceUse => ({
        kind: 'statement_line',
        order: { orderType: line.order_type!, orderId: line.order_id! },
      })),
  ]
}

/**
 * For display: the statement lines carrying each of these transaction
 * references now, on any account (the forensics a slip keeps are those of
 * its last check; a line may have arrived since).
 */
export async function statementLinesCarrying(
  transRefs: Array<string | null>
): Promise<Map<string, LineSighting[]>> {
  const wanted = [...new Set(transRefs.filter((ref): ref is string => !!ref))]
  const found = new Map<string, LineSighting[]>(wanted.map((ref) => [ref, []]))
  if (wanted.length === 0) return found
  const lines = await withLineOrder(db.from('statement_lines'))
    .whereIn('statement_lines.trans_ref', wanted)
    .orderBy('statement_lines.id')
    .limit(LIMIT * wanted.length)
    .select(
      'statement_lines.id',
      'statement_lines.trans_ref',
      'statement_lines.deposit_account_id',
      'statement_lines.amount',
      'statement_lines.line_at',
      'statement_lines.status',
      'statement_lines.order_type',
      'statement_lines.order_id'
    )
  for (const line of lines) {
    const list = found.get(line.trans_ref)
    if (!list || list.length >= LIMIT) continue
    list.push({
      statement_line_id: Number(line.id),
      deposit_account_id: Number(line.deposit_account_id),
      amount: Number(line.amount),
      line_at: new Date(line.line_at).toISOString(),
      status: line.status,
      order_type: line.order_type,
      order_id: line.order_id === null ? null : Number(line.order_id),
      ...lineOrder(line),
    })
  }
  return found
}
