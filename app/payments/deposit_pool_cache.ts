import gateway from '#config/gateway'
import { ProcessCache } from '#core/process_cache'
import type DepositAccount from '#payments/models/deposit_account'

/**
 * Each deposit group's active accounts outside a maintenance window, as
 * payment create reads them on every request (eligibleAccounts), kept per
 * process for CONFIG_CACHE_TTL_MS. A saved deposit account or maintenance
 * window drops every group (their model hooks): such changes are rare. A
 * create still reads its chosen account afresh, share-locked, before using
 * it, so a cached copy only ever orders the candidates.
 */
export const depositPools = new ProcessCache<string, DepositAccount[]>(
  () => gateway.configCacheTtlMs
)
