import type { KeyObject } from 'node:crypto'
import db from '@adonisjs/lucid/services/db'
import { activeCredentials, decryptSecret, hmacKey } from '#merchants/credentials'
import { ipMatcher, whitelistFor } from '#merchants/ip_whitelist'
import { onMerchantAuthChange } from '#merchants/merchant_auth_changes'
import gateway from '#config/gateway'

/**
 * A credential as authentication needs it. Its end date is checked on every
 * request, so a credential in its grace period stops at that instant even
 * while its copy is cached.
 */
export class CachedCredential {
  #key?: KeyObject

  constructor(
    readonly id: number,
    readonly tokenHash: string,
    readonly secretEncrypted: string,
    /** End of the grace period in epoch ms; null: the current credential. */
    readonly validUntilMs: number | null
  ) {}

  validAt(nowMs: number) {
    return this.validUntilMs === null || this.validUntilMs > nowMs
  }

  /**
   * The secret as a ready HMAC key, decrypted on first use only (as before,
   * a secret that cannot be decrypted fails the requests that need it, on
   * every attempt, and not those of the merchant's other credentials).
   */
  get key(): KeyObject {
    this.#key ??= hmacKey(decryptSecret(this))
    return this.#key
  }
}

/** What authentication reads about one merchant. */
export interface MerchantAuthData {
  /** The merchants row as the database returned it (a fresh model is made from it per request). */
  row: Record<string, any>
  status: string
  /** Not revoked, and not past their grace end when read. */
  credentials: CachedCredential[]
  whitelist: string[]
  allows: (ip: string) => boolean
}

export type MerchantAuthLoader = (merchantId: string) => Promise<MerchantAuthData | null>

/** Reads a merchant's authentication data from the database; null: no such merchant_id. */
export async function loadMerchantAuth(merchantId: string): Promise<MerchantAuthData | null> {
  const row = await db.from('merchants').where('merchant_id', merchantId).first()
  // Ids compare byte for byte, whatever the column's collation.
  if (!row || row.merchant_id !== merchantId) return null
  const [credentials, whitelist] = await Promise.all([
    activeCredentials(row.id),
    whitelistFor(row.id),
  ])
  return {
    row,
    status: row.status,
    credentials: credentials.map(
      (credential) =>
        new CachedCredential(
          credential.id,
          credential.tokenHash,
          credential.secretEncrypted,
          credential.expiresAt ? credential.expiresAt.toMillis() : null
        )
    ),
    whitelist,
    allows: ipMatcher(whitelist),
  }
}

interface Entry {
  data: MerchantAuthData | null
  expiresAt: number
}

interface Load {
  promise: Promise<MerchantAuthData | null>
  /** A change was announced while it read: its result answers its callers but is not kept. */
  stale: boolean
}

export interface MerchantAuthCacheOptions {
  ttlMs: number
  maxEntries: number
}

/**
 * Per-process cache of merchant authentication data, keyed by merchant_id.
 *
 * - An entry lives at most `ttlMs` from the moment its rows were read.
 * - An announced change (merchantAuthChanged) drops the entry at once, and a
 *   read that was under way when it came is not kept.
 * - Bounded: at most `maxEntries` merchants and a tenth of that for unknown
 *   merchant_ids (kept apart so that a flood of made-up ids cannot push the
 *   real merchants out); the oldest goes first.
 * - Concurrent requests for one merchant share one read.
 */
export class MerchantAuthCache {
  #found = new Map<string, Entry>()
  #missing = new Map<string, Entry>()
  #loads = new Map<string, Load>()

  constructor(
    private options: MerchantAuthCacheOptions,
    private load: MerchantAuthLoader = loadMerchantAuth
  ) {}

  get size() {
    return { found: this.#found.size, missing: this.#missing.size }
  }

  /** Drops the announced changes from now on; returns how to stop. */
  followChanges() {
    return onMerchantAuthChange((merchantId) => this.forget(merchantId))
  }

  /** The cached answer without reading anything; undefined: get() would read the database. */
  peek(merchantId: string): MerchantAuthData | null | undefined {
    if (this.options.ttlMs <= 0) return undefined
    const entry = this.#found.get(merchantId) ?? this.#missing.get(merchantId)
    return entry && entry.expiresAt > Date.now() ? entry.data : undefined
  }

  async get(merchantId: string): Promise<MerchantAuthData | null> {
    if (this.options.ttlMs <= 0) return this.load(merchantId)
    const entry = this.#found.get(merchantId) ?? this.#missing.get(merchantId)
    if (entry) {
      if (entry.expiresAt > Date.now()) return entry.data
      this.#found.delete(merchantId)
      this.#missing.delete(merchantId)
    }
    return (this.#loads.get(merchantId) ?? this.#startLoad(merchantId)).promise
  }

  /** Drops one merchant's entry, or every entry (null). */
  forget(merchantId: string | null) {
    if (merchantId === null) {
      this.#found.clear()
      this.#missing.clear()
      for (const load of this.#loads.values()) load.stale = true
      this.#loads.clear()
      return
    }
    this.#found.delete(merchantId)
    this.#missing.delete(merchantId)
    const load = this.#loads.get(merchantId)
    if (load) {
      load.stale = true
      this.#loads.delete(merchantId)
    }
  }

  #startLoad(merchantId: string): Load {
    const readAt = Date.now()
    const load: Load = { stale: false, promise: this.load(merchantId) }
    const done = () => {
      if (this.#loads.get(merchantId) === load) this.#loads.delete(merchantId)
    }
    load.promise = load.promise.then(
      (data) => {
        done()
        if (!load.stale) this.#keep(merchantId, data, readAt + this.options.ttlMs)
        return data
      },
      (error) => {
        done()
        throw error
      }
    )
    this.#loads.set(merchantId, load)
    return load
  }

  #keep(merchantId: string, data: MerchantAuthData | null, expiresAt: number) {
    const [entries, limit] =
      data === null
        ? [this.#missing, Math.max(1, Math.floor(this.options.maxEntries / 10))]
        : [this.#found, Math.max(1, this.options.maxEntries)]
    this.#found.delete(merchantId)
    this.#missing.delete(merchantId)
    // Oldest first; every entry has the same lifetime, so expired ones are at the front.
    const now = Date.now()
    for (const [key, entry] of entries) {
      if (entries.size < limit && entry.expiresAt > now) break
      entries.delete(key)
    }
    entries.set(merchantId, { data, expiresAt })
  }
}

/** The process's cache: changes announced anywhere drop its entries. */
export const merchantAuthCache = new MerchantAuthCache(gateway.authCache)
merchantAuthCache.followChanges()
