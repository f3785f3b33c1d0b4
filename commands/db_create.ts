import { BaseCommand, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'
import mysql from 'mysql2/promise'

/**
 * Creates the configured database when it does not exist. Runs without
 * booting Lucid, which cannot connect to a database that is not there yet.
 */
export default class DbCreate extends BaseCommand {
  static commandName = 'db:create'
  static description =
    'Create the MySQL/MariaDB database named in the configuration if it is missing'
  static options: CommandOptions = { startApp: false }

  @flags.string({
    description: 'Database name (default: DB_DATABASE, or DB_TEST_DATABASE under NODE_ENV=test)',
  })
  declare database?: string

  async run() {
    const { databaseName, serverConnection } = await import('#config/database')
    const name = this.database ?? databaseName
    if (!/^[A-Za-z0-9_]{1,64}$/.test(name)) {
      this.logger.error(`Refusing database name "${name}": letters, digits and _ only`)
      this.exitCode = 1
      return
    }
    const connection = await mysql.createConnection(serverConnection)
    try {
      // Identifiers cannot be bound as parameters; the name is checked above.
      await connection.query(
        `CREATE DATABASE IF NOT EXISTS \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`
      )
      this.logger.success(`Database ${name} is ready`)
    } finally {
      await connection.end()
    }
  }
}
