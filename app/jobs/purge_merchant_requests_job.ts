import { purgeOldRequests } from '#core/merchant_requests'

/** merchant-requests.purge — idempotent: deletes only answers past their keeping time. */
export default async function purgeMerchantRequestsJob() {
  return { purged: await purgeOldRequests() }
}
