import env from '#start/env'
import { defineConfig } from '@adonisjs/lucid'

const defaultDatabase = process.env.NODE_ENV === 'test' ? 'gateway_test' : 'gateway'

const dbConfig = defineConfig({
  connection: 'mysql',
  connections: {
    mysql: {
      client: 'mysql2',
      connection: {
        host: env.get('DB_HOST', '127.0.0.1'),
        port: env.get('DB_PORT', 3306),
        user: env.get('DB_USER', 'root'),
        password: env.get('DB_PASSWORD', ''),
        database: env.get('DB_DATABASE', defaultDatabase),
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
