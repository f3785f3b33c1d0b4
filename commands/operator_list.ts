import { BaseCommand, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/** The back-office operators, their roles and whether they can sign in. */
export default class OperatorList extends BaseCommand {
  static commandName = 'operator:list'
  static description = 'List back-office operators'
  static options: CommandOptions = { startApp: true }

  @flags.boolean({ description: 'Print one JSON array' })
  declare json?: boolean

  async run() {
    const { default: Operator } = await import('#operators/models/operator')
    const { formatGatewayDateTime } = await import('#core/clock')
    const operators = await Operator.query().orderBy('email')
    const rows = operators.map((operator) => ({
      email: operator.email,
      name: operator.name,
      role: operator.role,
      enabled: operator.disabledAt === null,
      password: operator.password !== null,
      enrolment_link_expires: formatGatewayDateTime(operator.enrolmentExpiresAt),
      second_factor: operator.totpEnabledAt !== null,
      last_login: formatGatewayDateTime(operator.lastLoginAt),
    }))
    if (this.json) {
      console.log(JSON.stringify(rows))
      return
    }
    const table = this.ui.table()
    table.head(['email', 'name', 'role', 'enabled', 'password', '2FA', 'last login (GMT+7)'])
    for (const row of rows) {
      table.row([
        row.email,
        row.name,
        row.role,
        row.enabled ? 'yes' : 'no',
        row.password ? 'set' : `link until ${row.enrolment_link_expires ?? '-'}`,
        row.second_factor ? 'enrolled' : 'not yet',
        row.last_login ?? '-',
      ])
    }
    table.render()
  }
}
