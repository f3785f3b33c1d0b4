import env from '#start/env'
import { defineConfig } from '@adonisjs/lucid'

/**
 * Tests never use DB_DATABASE: the suite empties every table of its database,
 * so it gets its own (DB_TEST_DATABASE, default gateway_test).
 */
export const databaseName =
  env.get('NODE_ENV') === 'test'
    ? env.get('DB_TEST_DATABASE', 'gateway_test')
    : env.get('DB_DATABASE', 'gateway')

export const serverConnection = {
  host: env.get('DB_HOST', '127.0.0.1'),
  port: env.get('DB_PORT', 3306),
  user: env.get('DB_USER', 'root'),
  password: env.get('DB_PASSWORD', ''),
}

const dbConfig = defineConfig({
  connection: 'mysql',
  connections: {
    mysql: {
      client: 'mysql2',
      connection: {
        ...serverConnection,
        database: databaseName,
        // Store and read DATETIME columns as UTC regardless of the server zone.
        timezone: 'Z',
        dateStrings: false,
        // BIGINT satang must never pass through a float.
        supportBigNumbers: true,
        bigNumberStrings: true,
        charset: 'utf8mb4',
      },
      pool: { min: 0, max: 20 },
      migrations: {
        naturalSort: true,
        paths: ['database/migrations'],
      },
      schemaGeneration: { enabled: false },
    },
  },
})

export default dbConfig
