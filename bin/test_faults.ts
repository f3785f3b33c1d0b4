/*
| Fault suite runner (`npm run test:faults`). Japa on its own, without booting
| the application: the runner never opens the developer's database or Redis.
| It starts a private MariaDB and Redis, runs the gateway's real processes
| from this checkout against them (tests/faults/**), and stops everything at
| the end, on failure and on Ctrl-C. Arguments go to Japa, e.g.
| `npm run test:faults -- --files tests/faults/replay.spec.ts`.
*/
import { assert } from '@japa/assert'
import { configure, processCLIArgs, run } from '@japa/runner'
import { spec } from '@japa/runner/reporters'
import { timing } from '#tests/helpers/timing_reporter'
import { killAll } from '#tests/faults/helpers/processes'
import { startWorld } from '#tests/faults/helpers/world'

let teardown: (() => Promise<void>) | undefined

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, async () => {
    console.error(`\nfault suite: ${signal}, stopping its MariaDB, Redis and gateway processes`)
    await (teardown ?? killAll)().catch(() => {})
    process.exit(130)
  })
}

const started = Date.now()
processCLIArgs(process.argv.splice(2))
configure({
  files: ['tests/faults/**/*.spec.ts'],
  plugins: [assert()],
  // Each test as it ends, then the slowest tests and the total.
  reporters: { activated: ['spec', 'timing'], list: [spec(), timing()] },
  // A scenario waits for payment orders to expire (60 s TTL) and for recovery.
  timeout: 300_000,
  setup: [
    async () => {
      teardown = await startWorld()
      return async () => {
        await teardown?.()
        teardown = undefined
        console.log(`fault suite: ${((Date.now() - started) / 1000).toFixed(0)} s in all`)
      }
    },
  ],
  forceExit: true,
})

await run()
