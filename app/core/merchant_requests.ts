import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import db from '@adonisjs/lucid/services/db'
import { duplicateKeyName, statement } from '#core/sql_batch'

/**
 * A merchant's request that changes state, executed once: the action writes
 * its row first in the transaction that creates the order (or slip), and
 * names what it created at the end. The primary key (merchant, signature of
 * the exact bytes) makes a second execution impossible: a duplicate that
 * arrives meanwhile waits on the row's lock, then finds it taken
 * (RequestAlreadyProcessed) and is answered what the first was.
 */
export interface RequestKey {
  merchantId: number
  /** The request's X-SIGNATURE: the HMAC of its exact bytes, 64 hex. */
  signature: string
  endpoint: string
}

export type RequestOrderType = 'payment' | 'withdraw' | 'settlement' | 'slip'

/** The same request (same bytes) was processed, or is being processed, already. */
export class RequestAlreadyProcessed extends Error {
  constructor(public key: RequestKey) {
    super(
      `request ${key.signature.slice(0, 12)}… of merchant ${key.merchantId} was already processed`
    )
    this.name = 'RequestAlreadyProcessed'
  }
}

/**
 * Whether the error is this request's row refused by its primary key: a
 * duplicate entry of `merchant-signature` (MariaDB names the key PRIMARY,
 * whatever the table, and cuts the value to 64 characters).
 */
export function isRequestTaken(error: unknown, key: RequestKey) {
  if (duplicateKeyName(error) !== 'PRIMARY') return false
  const value = `'${key.merchantId}-${key.signature.slice(0, 32)}`
  return ((error as { sqlMessage?: string }).sqlMessage ?? '').includes(value)
}

/**
 * The statement that writes the request's row, first in a create's batch,
 * naming the order it creates by the platform_order_id the gateway made for
 * it (one statement: nothing to update once the order's id is known).
 */
export function requestStatement(
  key: RequestKey,
  orderType: RequestOrderType,
  platformOrderId: string | null = null
) {
  return statement(
    `INSERT INTO merchant_requests (merchant_id, signature, endpoint, order_type, platform_order_id, created_at)
     VALUES (?, ?, ?, ?, ?, ?)`,
    [
      key.merchantId,
      key.signature,
      key.endpoint.slice(0, 40),
      orderType,
      platformOrderId,
      new Date(),
    ]
  )
}

/** The request's row, in a Lucid transaction; RequestAlreadyProcessed when taken. */
export async function recordRequest(
  trx: TransactionClientContract,
  key: RequestKey,
  orderType: RequestOrderType
) {
  const { sql, bindings } = requestStatement(key, orderType)
  try {
    await trx.rawQuery(sql, bindings as any[])
  } catch (error) {
    if (isRequestTaken(error, key)) throw new RequestAlreadyProcessed(key)
    throw error
  }
}

/** Names what the request created, in its transaction. */
export async function linkRequest(
  trx: TransactionClientContract,
  key: RequestKey,
  orderId: number
) {
  await trx
    .from('merchant_requests')
    .where({ merchant_id: key.merchantId, signature: key.signature })
    .update({ order_id: orderId })
}

/**
 * How long a request's answer is kept. Its bytes are refused as stale once
 * their `time` is past the tolerance (minutes), so any retry of them comes
 * long before; the day kept is for support, who look a request up by its
 * signature (Stripe keeps idempotency keys as long).
 */
export const REQUESTS_KEPT_HOURS = 24

/** Forgets answers older than REQUESTS_KEPT_HOURS, in slices that hold no lock for long. */
export async function purgeOldRequests(now = new Date()) {
  const before = new Date(now.getTime() - REQUESTS_KEPT_HOURS * 3_600_000)
  let purged = 0
  for (;;) {
    const [result] = await db.rawQuery(
      'DELETE FROM merchant_requests WHERE created_at < ? LIMIT 5000',
      [before]
    )
    purged += result.affectedRows
    if (result.affectedRows < 5000) return purged
  }
}
