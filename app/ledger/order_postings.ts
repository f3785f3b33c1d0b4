import db from '@adonisjs/lucid/services/db'
import { GATEWAY_OWNER } from '#ledger/accounts'
import { formatThb } from '#core/money'
import { formatGatewayDateTime } from '#core/clock'

export interface PostingLeg {
  /** "gateway", or the merchant's public merchant_id. */
  owner: string
  account: string
  /** Signed THB with 2 decimals: + increases the account. */
  amount: string
}

export interface Posting {
  id: number
  kind: string
  description: string | null
  time: string
  legs: PostingLeg[]
  /** The legs sum to zero (always, unless the ledger was written around). */
  balanced: boolean
}

/**
 * The ledger transactions that reference an object (an order: type
 * "payment", "withdraw" or "settlement" and its platform_order_id), oldest
 * first, each with its legs and their accounts.
 */
export async function postingsOf(reference: { type: string; id: string }): Promise<Posting[]> {
  const rows = await db
    .from('ledger_transactions')
    .join('ledger_entries', 'ledger_entries.transaction_id', 'ledger_transactions.id')
    .join('ledger_accounts', 'ledger_accounts.id', 'ledger_entries.account_id')
    .leftJoin('merchants', 'merchants.id', 'ledger_accounts.merchant_id')
    .where('ledger_transactions.reference_type', reference.type)
    .where('ledger_transactions.reference_id', reference.id)
    .orderBy('ledger_transactions.id')
    .orderBy('ledger_entries.id')
    .select(
      'ledger_transactions.id',
      'ledger_transactions.kind',
      'ledger_transactions.description',
      'ledger_transactions.created_at',
      'ledger_accounts.owner',
      'ledger_accounts.code',
      'merchants.merchant_id',
      'ledger_entries.amount'
    )
  const postings = new Map<number, Posting & { sum: bigint }>()
  for (const row of rows) {
    const id = Number(row.id)
    let posting = postings.get(id)
    if (!posting) {
      posting = {
        id,
        kind: row.kind,
        description: row.description,
        time: formatGatewayDateTime(row.created_at)!,
        legs: [],
        balanced: true,
        sum: 0n,
      }
      postings.set(id, posting)
    }
    // BIGINT arrives as a string: summed without a float.
    posting.sum += BigInt(row.amount)
    posting.legs.push({
      owner: row.owner === GATEWAY_OWNER ? GATEWAY_OWNER : (row.merchant_id ?? row.owner),
      account: row.code,
      amount: formatThb(Number(row.amount)),
    })
  }
  return [...postings.values()].map(({ sum, ...posting }) => ({ ...posting, balanced: sum === 0n }))
}
