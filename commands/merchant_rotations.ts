import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/**
 * A merchant's credentials (current, in grace, revoked) and scheduled
 * rotations; --reveal prints, once, the values a rotation scheduled from the
 * shell issued (one asked in the back-office is shown only to its requester,
 * there).
 */
export default class MerchantRotations extends BaseCommand {
  static commandName = 'merchant:rotations'
  static description =
    "List a merchant's credentials and scheduled rotations, or reveal a rotation's new values once"
  static options: CommandOptions = { startApp: true }

  @args.string({ description: 'merchant_id' })
  declare merchantId: string

  @flags.string({
    description:
      'Print the new values of this rotation scheduled from the shell (once; then cleared)',
  })
  declare reveal?: string

  @flags.boolean({ description: 'Print the result as one JSON object' })
  declare json?: boolean

  async run() {
    const { viewCredentialHandover, waitingHandovers } =
      await import('#merchants/actions/view_credential_handover')
    const { credentialsOf, rotationsOf } = await import('#merchants/rotation_rules')
    const { default: Merchant } = await import('#merchants/models/merchant')
    const { runAction } = await import('#core/cli')
    const { cliActor } = await import('#core/actor')
    const { ActionError } = await import('#core/validation')
    await runAction(this, async () => {
      if (this.reveal !== undefined) {
        const revealed = await viewCredentialHandover(
          { merchant_id: this.merchantId, rotation_id: this.reveal },
          cliActor()
        )
        const values = {
          ...(revealed.token ? { token: revealed.token } : {}),
          ...(revealed.secret ? { secret: revealed.secret } : {}),
        }
        if (this.json) {
          console.log(JSON.stringify({ merchant_id: revealed.merchant.merchantId, ...values }))
          return
        }
        for (const [key, value] of Object.entries(values)) console.log(`${key}: ${value}`)
        this.logger.warning(
          "These values are shown only now. Store them in the merchant's secret manager."
        )
        return
      }

      const merchant = await Merchant.findBy('merchant_id', this.merchantId)
      if (!merchant) {
        throw ActionError.notFound('merchant_id', `No merchant with merchant_id ${this.merchantId}`)
      }
      const credentials = await credentialsOf(merchant.id)
      const rotations = await rotationsOf(merchant.id)
      const waiting = await waitingHandovers(merchant)
      if (this.json) {
        console.log(
          JSON.stringify({
            merchant_id: merchant.merchantId,
            credentials,
            rotations,
            waiting_handovers: waiting,
          })
        )
        return
      }
      const credentialTable = this.ui.table()
      credentialTable.head(['credential', 'token ends', 'state', 'created', 'until', 'revoked'])
      for (const row of credentials) {
        credentialTable.row([
          String(row.id),
          `…${row.token_hint}`,
          row.state,
          String(row.created_at),
          row.expires_at ?? '-',
          row.revoked_at ?? '-',
        ])
      }
      credentialTable.render()
      if (rotations.length === 0) {
        console.log(`${merchant.merchantId}: no scheduled rotations`)
        return
      }
      const rotationTable = this.ui.table()
      rotationTable.head(['rotation', 'rotates', 'run at', 'grace s', 'status', 'new values', 'by'])
      for (const row of rotations) {
        rotationTable.row([
          String(row.id),
          [row.token && 'token', row.secret && 'secret'].filter(Boolean).join('+'),
          String(row.run_at),
          String(row.grace_seconds),
          row.failure ? `${row.status}: ${row.failure}` : row.status,
          waiting.some((handover) => handover.rotation_id === row.id)
            ? `waiting for one view by ${waiting.find((handover) => handover.rotation_id === row.id)!.requested_by}`
            : '-',
          row.requested_by,
        ])
      }
      rotationTable.render()
    })
  }
}
