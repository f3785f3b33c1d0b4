import { MerchantClient, type MerchantClientOptions } from '#client/index'
import { testServers } from '#tests/helpers/servers'
import type { TestMerchant } from '#tests/helpers/merchants'

/**
 * The reference merchant client (client/) of a test merchant, talking to the
 * test gateway over HTTPS and trusting its certificate (options override,
 * e.g. `baseUrl` of a proxy). Its idle keep-alive sockets do not hold the
 * process; close() drops them.
 */
export function clientFor(who: TestMerchant, options: Partial<MerchantClientOptions> = {}) {
  return new MerchantClient({
    baseUrl: testServers.httpsUrl,
    merchantId: who.merchantId,
    token: who.token,
    secret: who.secret,
    ca: testServers.certificate,
    ...options,
  })
}
