/*
| Test runner entry point (Japa). `npm test` runs it through bin/test.sh, which
| first makes sure the test database exists.
*/
process.env.NODE_ENV = 'test'
// The functional suite plays a TLS-terminating proxy from 127.0.0.1 and untrusted
// clients from other loopback addresses (127.0.0.2, ...).
process.env.TRUSTED_PROXIES ??= '127.0.0.1'
// The sandbox bank answers quickly in tests.
process.env.SANDBOX_BANK_DELAY_MS ??= '200'
// Callback retries 200 ms apart instead of 60 s; receivers run on loopback.
process.env.CALLBACK_RETRY_DELAY_MS ??= '200'
process.env.CALLBACK_ALLOW_PRIVATE_TARGETS ??= 'true'
process.env.CALLBACK_TIMEOUT_MS ??= '3000'
// The suite sends thousands of requests, many with bad credentials, from 127.0.0.1:
// request rate limits are tested with their own settings (rate_limits.spec.ts).
process.env.API_RATE_LIMIT_PER_IP ??= '100000'
process.env.API_RATE_LIMIT_PER_MERCHANT ??= '100000'
process.env.API_AUTH_FAILURES_PER_IP ??= '100000'
// A killed worker's jobs are picked up after 3 s instead of 30 s.
process.env.QUEUE_LOCK_DURATION_MS ??= '3000'
// Overdue orders are expired within a second instead of 5 s.
process.env.EXPIRY_SWEEP_INTERVAL_MS ??= '1000'

import 'reflect-metadata'
import { Ignitor, prettyPrintError } from '@adonisjs/core'
import { configure, processCLIArgs, run } from '@japa/runner'
import { runShards, shardCount } from './test_shards.js'

const APP_ROOT = new URL('../', import.meta.url)

/**
 * Every test closes what it opened, so the process exits on its own once the
 * run is over. If something was left open (a test that failed before its
 * cleanup, a leaked server, timer or child process), the run would otherwise
 * wait for it or for CI's timeout: name what holds it, stop child processes,
 * and exit with the run's own verdict (Japa has set the exit code by then).
 */
function exitIfHeldOpen(graceMs = 30_000) {
  setTimeout(async () => {
    const { commandLine, descendants } = await import('#tests/faults/helpers/processes')
    const children = await descendants(process.pid)
    const commands = await Promise.all(children.map(commandLine))
    process.stderr.write(
      `The test process is still running ${graceMs / 1000} s after the run: ` +
        `held open by ${process.getActiveResourcesInfo().join(', ')}` +
        (children.length ? `; child processes: ${commands.join('; ')}` : '') +
        '\n'
    )
    for (const pid of children) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {}
    }
    process.exit(process.exitCode ?? 0)
  }, graceMs).unref()
}

const IMPORTER = (filePath: string) => {
  if (filePath.startsWith('./') || filePath.startsWith('../')) {
    return import(new URL(filePath, APP_ROOT).href)
  }
  return import(filePath)
}

function runJapa() {
  new Ignitor(APP_ROOT, { importer: IMPORTER })
    .tap((app) => {
      app.booting(async () => {
        await import('#start/env')
      })
      app.listen('SIGTERM', () => app.terminate())
      app.listenIf(app.managedByPm2, 'SIGINT', () => app.terminate())
    })
    .testRunner()
    .configure(async (app) => {
      const { runnerHooks, ...config } = await import('../tests/bootstrap.js')

      processCLIArgs(process.argv.splice(2))
      configure({
        ...app.rcFile.tests,
        ...config,
        ...{
          setup: runnerHooks.setup,
          teardown: runnerHooks.teardown.concat([() => app.terminate()]),
        },
      })
    })
    .run(async () => {
      await run()
      exitIfHeldOpen()
    })
    .catch((error) => {
      process.exitCode = 1
      prettyPrintError(error)
    })
}

/*
| A whole-suite run is dealt out to several processes of this same script,
| each on its own database and Redis database (bin/test_shards.ts); a run
| that picks files or tests, and each of those processes, runs Japa here.
*/
const shards = shardCount(process.argv.slice(2))
if (shards > 1) {
  const { default: rc } = await import('../adonisrc.js')
  process.exitCode = await runShards({
    appRoot: APP_ROOT.pathname,
    script: new URL(import.meta.url).pathname,
    argv: process.argv.slice(2),
    suites: (rc.tests?.suites ?? []).map(({ name, files }) => ({ name, files: [files].flat() })),
    shards,
  })
} else {
  // Mail goes over real SMTP to a server in this process (tests/helpers/mailbox.ts).
  const { startMailbox } = await import('../tests/helpers/mailbox.js')
  process.env.MAIL_MAILER = 'smtp'
  process.env.SMTP_HOST = '127.0.0.1'
  process.env.SMTP_PORT = String(await startMailbox())
  runJapa()
}
