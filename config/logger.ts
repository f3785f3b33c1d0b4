import env from '#start/env'
import { defineConfig, targets } from '@adonisjs/core/logger'

/**
 * Paths that must never reach a log line. pino's redaction applies to every
 * object logged, whatever logs it (request logger, exception reports, jobs).
 */
export const REDACTED_PATHS = [
  'token',
  'secret',
  'password',
  'image_base64',
  '*.token',
  '*.secret',
  '*.password',
  '*.image_base64',
  '*.*.token',
  '*.*.secret',
  '*.*.password',
  '*.*.image_base64',
  'headers["x-signature"]',
  '*.headers["x-signature"]',
  'headers.authorization',
  '*.headers.authorization',
  'headers.cookie',
  '*.headers.cookie',
]

const defaultLevel = process.env.NODE_ENV === 'test' ? 'silent' : 'info'

const loggerConfig = defineConfig({
  default: 'app',
  loggers: {
    app: {
      enabled: true,
      name: env.get('APP_NAME', 'thb-gateway'),
      level: env.get('LOG_LEVEL', defaultLevel),
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      transport: env.get('LOG_PRETTY', false)
        ? { targets: [targets.pretty()] }
        : { targets: [targets.file({ destination: 1 })] },
    },
  },
})

export default loggerConfig

declare module '@adonisjs/core/types' {
  export interface LoggersList extends InferLoggers<typeof loggerConfig> {}
}
