import { BaseCommand, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/**
 * An operator locked out by failed sign-ins (five in 15 minutes on their
 * account): forgets the failures so they can sign in at once. The same
 * action as the Unlock button on the back-office's Operators page.
 */
export default class OperatorUnlock extends BaseCommand {
  static commandName = 'operator:unlock'
  static description = 'Unlock a back-office operator locked out by failed sign-ins'
  static options: CommandOptions = { startApp: true }

  @flags.string({ description: 'Email of the operator', required: true })
  declare email: string

  @flags.string({ description: 'Why (kept in the audit log)' })
  declare comment?: string

  async run() {
    const { unlockOperator } = await import('#operators/actions/unlock_operator')
    const { runAction } = await import('#core/cli')
    const { cliActor } = await import('#core/actor')
    await runAction(this, async () => {
      const { operator, wasLocked } = await unlockOperator(
        { email: this.email, comment: this.comment },
        cliActor()
      )
      this.logger.success(
        wasLocked
          ? `Operator ${operator.email} unlocked; they can sign in now`
          : `Operator ${operator.email} was not locked; their failed sign-ins are forgotten`
      )
    })
  }
}
