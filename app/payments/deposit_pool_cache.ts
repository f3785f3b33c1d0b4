import gateway from '#config/gateway'
import { ProcessCache } from '#core/process_cache'

/**
 * Each deposit group's active accounts outside a maintenance window, as
 * payment create reads them on every request (eligibleAccounts), kept per
 * process for CONFIG_CACHE_TTL_MS. A saved deposit account or maintenance
 * window drops every group (their model hooks): such changes are rare. A
 * create builds its order from the cached copy, but the order's insert is
 * refused when the copy no longer matches the share-locked row
 * (unchangedAccountExpression), and the create is built again from the row.
 *
 * The entries are DepositAccount rows; they are typed loosely here so that
 * the model, whose save hooks drop the cache, and this file do not import
 * each other: deposit_pool.ts reads and fills it through a typed view.
 */
export const depositPools = new ProcessCache<string, object[]>(() => gateway.configCacheTtlMs)
