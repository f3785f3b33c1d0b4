import app from '@adonisjs/core/services/app'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import redisConfig from '#config/redis'
import { RedisConnections, followChannel, publishChange } from '#core/redis'

/**
 * Announces changes to what merchant authentication reads (the merchant row,
 * its credentials, its IP whitelist) so that every web process drops its
 * cached copy at once: listeners in this process are told directly, the other
 * processes through a Redis channel. When Redis cannot carry the message the
 * cache lifetime (AUTH_CACHE_TTL_MS) still bounds how long a copy is used.
 */

/** Pub/sub channels are server-wide, not per database: the database number keeps test runs apart. */
export const MERCHANT_AUTH_CHANNEL = `gateway:merchant-auth-changed:${redisConfig.db}`

/** `merchantId` null: everything may have changed (messages were missed while disconnected). */
export type MerchantAuthListener = (merchantId: string | null) => void

const listeners = new Set<MerchantAuthListener>()

export function onMerchantAuthChange(listener: MerchantAuthListener) {
  listeners.add(listener)
  return () => listeners.delete(listener)
}

function tellListeners(merchantId: string | null) {
  for (const listener of listeners) listener(merchantId)
}

/** Per transaction, the merchants already announced on its commit (one message each). */
const pending = new WeakMap<TransactionClientContract, Set<string>>()

/**
 * Announces that `merchantId`'s authentication data changed: after `trx`
 * commits (before it, another request could read and cache the old rows
 * again), or at once without a transaction. Within a savepoint, the root
 * transaction must be passed: a savepoint's commit is not the real one.
 */
export async function merchantAuthChanged(
  trx: TransactionClientContract | undefined,
  merchantId: string
) {
  if (!trx || trx.isCompleted) return announce(merchantId)
  let announced = pending.get(trx)
  if (!announced) {
    announced = new Set()
    pending.set(trx, announced)
  }
  if (announced.has(merchantId)) return
  announced.add(merchantId)
  // Lucid awaits after-commit hooks: the action returns once the message is out.
  trx.after('commit', () => announce(merchantId))
}

async function announce(merchantId: string) {
  tellListeners(merchantId)
  // Redis away: the other processes' copies expire within AUTH_CACHE_TTL_MS.
  await publishChange(await app.container.make(RedisConnections), MERCHANT_AUTH_CHANNEL, merchantId)
}

let subscribed = false

/**
 * Subscribes this process to the changes announced by the others (once).
 * Every (re)subscription drops everything cached, once Redis confirms it, so
 * that nothing read before the confirmation survives it.
 */
export function listenForMerchantAuthChanges(connections: RedisConnections) {
  if (subscribed) return
  subscribed = true
  followChannel(
    connections,
    MERCHANT_AUTH_CHANNEL,
    (message) => {
      if (message.length > 0 && message.length <= 64) tellListeners(message)
    },
    () => tellListeners(null)
  )
}
