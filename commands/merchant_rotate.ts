import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'
import { cliActor } from '#services/audit'

export default class MerchantRotate extends BaseCommand {
  static commandName = 'merchant:rotate'
  static description =
    "Rotate a merchant's token and/or secret; the previous ones keep working for a grace period"
  static options: CommandOptions = { startApp: true }

  @args.string({ description: 'merchant_id' })
  declare merchantId: string

  @flags.boolean({ description: 'Rotate the token' })
  declare token?: boolean

  @flags.boolean({ description: 'Rotate the secret' })
  declare secret?: boolean

  @flags.number({
    description:
      'Seconds the previous credentials stay valid (default CREDENTIAL_GRACE_SECONDS; 0 revokes at once)',
  })
  declare grace?: number

  @flags.boolean({ description: 'Print the new values as one JSON object' })
  declare json?: boolean

  async run() {
    const { default: Merchant } = await import('#models/merchant')
    const { rotateCredentials } = await import('#services/credentials')
    const { default: gateway } = await import('#config/gateway')

    const merchant = await Merchant.findBy('merchant_id', this.merchantId)
    if (!merchant) {
      this.logger.error(`No merchant with merchant_id ${this.merchantId}`)
      this.exitCode = 1
      return
    }
    // Neither flag: rotate both, the usual answer to a suspected leak.
    const both = !this.token && !this.secret
    const graceSeconds = this.grace ?? gateway.credentialGraceSeconds
    if (!Number.isInteger(graceSeconds) || graceSeconds < 0) {
      this.logger.error('--grace must be a whole number of seconds, 0 or more')
      this.exitCode = 1
      return
    }
    const rotated = await rotateCredentials(merchant, {
      token: both || !!this.token,
      secret: both || !!this.secret,
      graceSeconds,
      actor: cliActor(),
    })
    if (this.json) {
      console.log(
        JSON.stringify({
          merchant_id: merchant.merchantId,
          ...rotated,
          grace_seconds: graceSeconds,
        })
      )
      return
    }
    this.logger.success(`Rotated ${Object.keys(rotated).join(' and ')} of ${merchant.merchantId}`)
    for (const [key, value] of Object.entries(rotated)) console.log(`${key}: ${value}`)
    this.logger.info(
      graceSeconds === 0
        ? 'The previous credentials stopped working now.'
        : `The previous credentials keep working for ${graceSeconds} s.`
    )
  }
}
