import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/**
 * Ace adapter of the schedule- and cancel-rotation actions. The worker
 * rotates at --at and keeps the new values encrypted for one view from the
 * shell (merchant:rotations --reveal). Neither --token nor --secret: both.
 * Scheduling from the shell applies at once (the back-office asks a second
 * admin): a break-glass use, audited and notified to every admin.
 * Cancelling only stops a rotation and is immediate everywhere.
 */
export default class MerchantScheduleRotation extends BaseCommand {
  static commandName = 'merchant:schedule-rotation'
  static description =
    "Schedule a rotation of a merchant's token and/or secret for a given time, or cancel one"
  static options: CommandOptions = { startApp: true }

  @args.string({ description: 'merchant_id' })
  declare merchantId: string

  @flags.string({
    description: 'When: ISO 8601, e.g. 2030-01-31T02:00:00+07:00 (no offset: Bangkok time)',
  })
  declare at?: string

  @flags.boolean({ description: 'Rotate the token' })
  declare token?: boolean

  @flags.boolean({ description: 'Rotate the secret' })
  declare secret?: boolean

  @flags.string({
    description:
      'Seconds the previous credentials stay valid after the rotation (default CREDENTIAL_GRACE_SECONDS; at most 30 days)',
  })
  declare grace?: string

  @flags.string({ description: 'Cancel the scheduled rotation with this id instead' })
  declare cancel?: string

  @flags.string({ description: 'Why (kept in the audit log)' })
  declare comment?: string

  @flags.boolean({ description: 'Print the rotation as one JSON object' })
  declare json?: boolean

  async run() {
    const { scheduleCredentialRotation } =
      await import('#merchants/actions/schedule_credential_rotation')
    const { cancelScheduledRotation } = await import('#merchants/actions/cancel_scheduled_rotation')
    const { rotationSnapshot } = await import('#merchants/rotation_rules')
    const { runAction } = await import('#core/cli')
    const { cliActor } = await import('#core/actor')
    await runAction(this, async () => {
      if (this.cancel !== undefined) {
        const { rotation } = await cancelScheduledRotation(
          { merchant_id: this.merchantId, rotation_id: this.cancel, comment: this.comment },
          cliActor()
        )
        if (this.json) console.log(JSON.stringify(rotationSnapshot(rotation)))
        else this.logger.success(`Rotation ${rotation.id} of ${this.merchantId} cancelled`)
        return
      }
      const both = !this.token && !this.secret
      const scheduled = await scheduleCredentialRotation(
        {
          merchant_id: this.merchantId,
          run_at: this.at,
          token: both || !!this.token,
          secret: both || !!this.secret,
          grace_seconds: this.grace,
          comment: this.comment,
        },
        cliActor()
      )
      if (scheduled.outcome !== 'scheduled') throw new Error('a shell schedule applies at once')
      const { merchant, rotation } = scheduled
      const snapshot = rotationSnapshot(rotation)
      if (this.json) {
        console.log(JSON.stringify({ merchant_id: merchant.merchantId, ...snapshot }))
        return
      }
      const what = [snapshot.token && 'token', snapshot.secret && 'secret'].filter(Boolean)
      this.logger.success(
        `Rotation ${rotation.id} of the ${what.join(' and ')} of ${merchant.merchantId} scheduled for ${snapshot.run_at}`
      )
      this.logger.info(
        `Once it has run, print its new values (once, here on the server): merchant:rotations ${merchant.merchantId} --reveal ${rotation.id}`
      )
      this.logger.warning(
        'Break-glass: scheduled without a second admin; recorded in the audit log and notified to every admin.'
      )
    })
  }
}
