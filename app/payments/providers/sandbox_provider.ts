import { randomString } from '#core/random'
import {
  DepositProviderError,
  type DepositProvider,
  type ExternalPaymentRequest,
  type ExternalPaymentSession,
} from '#payments/providers/deposit_provider'

/**
 * A local stand-in for an external payment provider. Its "hosted page" is the
 * gateway's own /sandbox/provider/:reference page. provider_config on the
 * deposit account steers it: `{ "fail": true }` makes every call fail,
 * `{ "delay_ms": 50 }` slows it down (to exercise timeouts).
 */
export class SandboxDepositProvider implements DepositProvider {
  readonly name = 'sandbox'

  async createPayment(
    request: ExternalPaymentRequest,
    timeoutMs: number
  ): Promise<ExternalPaymentSession> {
    const config = request.account.providerConfig ?? {}
    const delay = Number(config.delay_ms ?? 0)
    if (delay > timeoutMs) {
      await new Promise((resolve) => setTimeout(resolve, timeoutMs))
      throw new DepositProviderError(`sandbox provider did not answer within ${timeoutMs} ms`)
    }
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay))
    if (config.fail === true) throw new DepositProviderError('sandbox provider refused the payment')
    const reference = `SBX${randomString(16)}`
    return { providerReference: reference, redirectUrl: `/sandbox/provider/${reference}` }
  }
}
