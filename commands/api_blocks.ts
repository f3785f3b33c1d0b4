import { BaseCommand, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/**
 * Ace adapter of the merchant API's failed-authentication blocks: lists the
 * blocked addresses and merchant_ids (--all: also those still counting under
 * their limit) with their failures and time left; --clear lifts one, through
 * the clear-block action (audited).
 */
export default class ApiBlocks extends BaseCommand {
  static commandName = 'api:blocks'
  static description =
    'List (or --clear) merchant API addresses and merchant_ids blocked after failed authentications'
  static options: CommandOptions = { startApp: true }

  @flags.string({ description: 'Lift the block of this IP address or merchant_id' })
  declare clear?: string

  @flags.string({ description: 'Why (kept in the audit log, with --clear)' })
  declare comment?: string

  @flags.boolean({ description: 'Also list addresses and merchant_ids still under their limit' })
  declare all?: boolean

  @flags.boolean({ description: 'Print one JSON array' })
  declare json?: boolean

  async run() {
    const { authFailureCounters, authFailureStore, presentCounter } =
      await import('#merchant_api/auth_failure_blocks')
    const { runAction } = await import('#core/cli')
    const { cliActor } = await import('#core/actor')

    if (this.clear !== undefined) {
      const { clearAuthFailureBlock } =
        await import('#merchant_api/actions/clear_auth_failure_block')
      await runAction(this, async () => {
        const result = await clearAuthFailureBlock(
          { subject: this.clear, comment: this.comment },
          cliActor()
        )
        const before = Math.max(...result.cleared.map((counter) => counter.failures))
        this.logger.success(
          `${presentCounter(result.cleared[0]).kind} ${result.subject}: ` +
            (result.wasBlocked ? 'block lifted' : 'not blocked; counter reset') +
            ` (${before} failed authentication${before === 1 ? '' : 's'} counted)`
        )
      })
      return
    }

    const redis = await authFailureStore()
    if (!redis) {
      this.logger.error('Redis is not reachable: the blocks cannot be read now')
      this.exitCode = 1
      return
    }
    const { counters, truncated } = await authFailureCounters(redis, { blockedOnly: !this.all })
    const rows = counters.map(presentCounter)
    if (this.json) {
      console.log(JSON.stringify(rows))
      return
    }
    if (rows.length === 0) {
      this.logger.info(
        this.all
          ? 'No failed authentication counted in the last minute, and nothing blocked'
          : 'Nothing blocked (--all also lists what is still under its limit)'
      )
      return
    }
    const table = this.ui.table()
    table.head(['kind', 'address or merchant_id', 'failures', 'limit', 'state', 'time left'])
    for (const row of rows) {
      table.row([
        row.kind,
        row.subject,
        String(row.failures),
        `${row.limit} per ${row.window_seconds === 60 ? 'minute' : `${row.window_seconds} s`}`,
        row.blocked ? 'blocked' : 'counting',
        row.time_left,
      ])
    }
    table.render()
    if (truncated) this.logger.warning('Only the first counters found are listed')
  }
}
