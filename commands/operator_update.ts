import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/** Changes an operator's role or access, or resets their second factor (a lost phone). */
export default class OperatorUpdate extends BaseCommand {
  static commandName = 'operator:update'
  static description =
    "Change a back-office operator's role, disable or enable them, reset their 2FA or password"
  static options: CommandOptions = { startApp: true }

  @args.string({ description: 'Email of the operator' })
  declare email: string

  @flags.string({ description: 'New role: admin, operator or viewer' })
  declare role?: string

  @flags.boolean({ description: 'Disable the operator (sessions end)' })
  declare disable?: boolean

  @flags.boolean({ description: 'Enable a disabled operator' })
  declare enable?: boolean

  @flags.boolean({ description: 'Forget the authenticator app; the next sign-in enrols again' })
  declare resetSecondFactor?: boolean

  @flags.boolean({
    description:
      'Forget the password and print a new one-time enrolment link (a forgotten password)',
  })
  declare newLink?: boolean

  @flags.string({ description: 'Why (kept in the audit log)' })
  declare comment?: string

  async run() {
    const { updateOperator } = await import('#operators/actions/update_operator')
    const { runAction } = await import('#core/cli')
    const { cliActor } = await import('#core/actor')
    await runAction(this, async () => {
      const { operator, changed, link } = await updateOperator(
        {
          email: this.email,
          role: this.role,
          enabled: this.disable ? 'off' : this.enable ? 'on' : undefined,
          reset_second_factor: this.resetSecondFactor ? 'on' : undefined,
          new_link: this.newLink ? 'on' : undefined,
          comment: this.comment,
        },
        cliActor()
      )
      if (link) {
        this.logger.info(
          `New enrolment link for ${operator.email} (works once, until ${link.expiresAt.toFormat("yyyy-MM-dd HH:mm 'UTC'")}):`
        )
        console.log(`\n  ${link.url}\n`)
      }
      this.logger.success(
        changed.length > 0
          ? `Operator ${operator.email}: ${changed.join(', ')} changed`
          : `Operator ${operator.email}: nothing changed`
      )
    })
  }
}
