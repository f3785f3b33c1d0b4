import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/**
 * Ace adapter of the rotate-credentials action. Neither --token nor --secret:
 * both, the usual answer to a suspected leak. From the server's shell it
 * applies at once (the back-office asks a second admin): a break-glass use,
 * audited and notified to every admin. The new values are printed once.
 */
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

  @flags.string({
    description:
      'Seconds the previous credentials stay valid (default CREDENTIAL_GRACE_SECONDS; 0 revokes at once; at most 30 days)',
  })
  declare grace?: string

  @flags.string({ description: 'Why (kept in the audit log)' })
  declare comment?: string

  @flags.boolean({ description: 'Print the new values as one JSON object' })
  declare json?: boolean

  async run() {
    const { rotateCredentials } = await import('#merchants/actions/rotate_credentials')
    const { runAction } = await import('#core/cli')
    const { cliActor } = await import('#core/actor')
    const both = !this.token && !this.secret
    await runAction(this, async () => {
      const rotated = await rotateCredentials(
        {
          merchant_id: this.merchantId,
          token: both || !!this.token,
          secret: both || !!this.secret,
          grace_seconds: this.grace,
          comment: this.comment,
        },
        cliActor()
      )
      if (rotated.outcome !== 'rotated') throw new Error('a shell rotation applies at once')
      const values = {
        ...(rotated.token ? { token: rotated.token } : {}),
        ...(rotated.secret ? { secret: rotated.secret } : {}),
      }
      if (this.json) {
        console.log(
          JSON.stringify({
            merchant_id: rotated.merchant.merchantId,
            ...values,
            grace_seconds: rotated.grace_seconds,
            previous_valid_until: rotated.previous_valid_until.toISO(),
          })
        )
        return
      }
      this.logger.success(
        `Rotated ${Object.keys(values).join(' and ')} of ${rotated.merchant.merchantId}`
      )
      for (const [key, value] of Object.entries(values)) console.log(`${key}: ${value}`)
      this.logger.info(
        rotated.grace_seconds === 0
          ? 'The previous credentials stopped working now.'
          : `The previous credentials keep working until ${rotated.previous_valid_until.toISO()} (${rotated.grace_seconds} s).`
      )
      this.logger.warning(
        'Break-glass: applied without a second admin; recorded in the audit log and notified to every admin.'
      )
    })
  }
}
