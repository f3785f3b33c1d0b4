import env from '#start/env'
import { defineConfig, destination, targets } from '@adonisjs/core/logger'

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
      /*
       * JSON lines go to stdout from the process itself (sonic-boom, written
       * asynchronously, flushed synchronously on exit), not through a
       * transport: a transport runs in a worker thread, a second V8 heap that
       * cost each process 13 MiB of RSS for nothing but copying lines to fd 1.
       * pino-pretty, for development only, stays a transport.
       */
      ...(env.get('LOG_PRETTY', false)
        ? { transport: { targets: [targets.pretty()] } }
        : { destination: destination({ dest: 1, sync: false }) }),
    },
  },
})

export default loggerConfig

declare module '@adonisjs/core/types' {
  export interface LoggersList extends InferLoggers<typeof loggerConfig> {}
}
