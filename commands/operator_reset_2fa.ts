import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/**
 * A lost or replaced phone: forgets the operator's authenticator app and
 * recovery codes and ends their sessions; their next sign-in enrols again.
 * The same action as `operator:update --reset-second-factor`.
 */
export default class OperatorReset2fa extends BaseCommand {
  static commandName = 'operator:reset-2fa'
  static description = "Reset a back-office operator's second factor (a lost phone)"
  static options: CommandOptions = { startApp: true }

  @args.string({ description: 'Email of the operator' })
  declare email: string

  @flags.string({ description: 'Why (kept in the audit log)' })
  declare comment?: string

  async run() {
    const { updateOperator } = await import('#operators/actions/update_operator')
    const { runAction } = await import('#core/cli')
    const { cliActor } = await import('#core/actor')
    await runAction(this, async () => {
      const { operator, changed } = await updateOperator(
        { email: this.email, reset_second_factor: 'on', comment: this.comment },
        cliActor()
      )
      this.logger.success(
        changed.includes('second_factor')
          ? `Operator ${operator.email}: second factor reset; their next sign-in enrols a new authenticator app`
          : `Operator ${operator.email} had no second factor enrolled; nothing changed`
      )
    })
  }
}
