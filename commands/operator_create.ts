import { BaseCommand, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/**
 * Creates a back-office operator (the first admin is created this way) and
 * prints their one-time enrolment link, where they choose their password and
 * enrol the second factor (TOTP). From the server's shell it applies at
 * once: an operator or admin created here is recorded as a break-glass use
 * and every admin is notified (in the back-office it waits for a second
 * admin).
 */
export default class OperatorCreate extends BaseCommand {
  static commandName = 'operator:create'
  static description = 'Create a back-office operator (admin, operator or viewer)'
  static options: CommandOptions = { startApp: true }

  @flags.string({ description: 'Email address (the login)', required: true })
  declare email: string

  @flags.string({ description: 'Role: admin (configures), operator (runs operations) or viewer' })
  declare role?: string

  @flags.string({ description: 'Display name (default: the part of the email before @)' })
  declare name?: string

  @flags.boolean({ description: 'Print the result as one JSON object' })
  declare json?: boolean

  async run() {
    const { createOperator } = await import('#operators/actions/create_operator')
    const { runAction } = await import('#core/cli')
    const { cliActor } = await import('#core/actor')
    await runAction(this, async () => {
      const { operator, link } = await createOperator(
        { email: this.email, name: this.name, role: this.role ?? 'admin' },
        cliActor()
      )
      // From the shell the account exists at once and its link is returned.
      if (!operator || !link) throw new Error('the operator was not created')
      if (this.json) {
        console.log(
          JSON.stringify({
            email: operator.email,
            role: operator.role,
            enrolment_url: link.url,
            expires_at: link.expiresAt.toISO(),
          })
        )
        return
      }
      this.logger.success(`Operator ${operator.email} (${operator.role}) created`)
      this.logger.info(
        `Enrolment link (works once, until ${link.expiresAt.toFormat("yyyy-MM-dd HH:mm 'UTC'")}):`
      )
      console.log(`\n  ${link.url}\n`)
      this.logger.info(
        'Open it in a browser (or hand it to the operator): it sets the password, then enrols an authenticator app (TOTP).'
      )
      if (operator.role !== 'viewer') {
        this.logger.info(
          'Recorded as a break-glass use (created from the server, without a second admin): every admin is notified.'
        )
      }
    })
  }
}
