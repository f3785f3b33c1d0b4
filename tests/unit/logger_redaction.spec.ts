import { test } from '@japa/runner'
import { Writable } from 'node:stream'
import { pino } from 'pino'
import loggerConfig, { REDACTED_PATHS } from '#config/logger'

test.group('log redaction', () => {
  test('the application logger is configured with the redaction list', ({ assert }) => {
    const app = (loggerConfig as any).loggers.app
    assert.deepEqual(app.redact.paths, REDACTED_PATHS)
    assert.include(REDACTED_PATHS, '*.headers["x-signature"]')
  })

  test('lines are written by the process itself, not through a worker-thread transport', ({
    assert,
  }) => {
    const app = (loggerConfig as any).loggers.app
    assert.isUndefined(app.transport)
    assert.equal(app.destination?.constructor?.name, 'SonicBoom')
    assert.equal(app.destination.fd, 1)
  })

  test('credentials, signatures, passwords and images never reach a log line', ({ assert }) => {
    const lines: string[] = []
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(chunk.toString())
        done()
      },
    })
    const logger = pino({ redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, sink)
    logger.info({
      token: 'tok-top',
      body: {
        merchant_id: 'M1',
        token: 'tok-body',
        secret: 'sec-body',
        image_base64: 'iVBORw0KGgo',
      },
      req: { headers: { 'x-signature': 'abcdef', 'authorization': 'Bearer x', 'cookie': 'a=b' } },
      admin: { user: { password: 'hunter2' } },
    })
    const line = lines.join('')
    for (const value of [
      'tok-top',
      'tok-body',
      'sec-body',
      'iVBORw0KGgo',
      'abcdef',
      'Bearer x',
      'a=b',
      'hunter2',
    ]) {
      assert.notInclude(line, value)
    }
    assert.include(line, '"merchant_id":"M1"')
  })
})
