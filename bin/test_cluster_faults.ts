/*
| Topology fault suite runner (`npm run test:cluster-faults`). Japa on its
| own, without booting the application: it starts the production topology of
| bin/cluster/topology.ts in a temporary directory (three Galera nodes behind
| HAProxy, Redis master + replica + three Sentinels, two web processes, two
| workers), runs tests/cluster_faults/** against it, and stops everything at
| the end, on failure and on Ctrl-C. Arguments go to Japa.
*/
import { assert } from '@japa/assert'
import { configure, processCLIArgs, run } from '@japa/runner'
import { spec } from '@japa/runner/reporters'
import { timing } from '#tests/helpers/timing_reporter'
import { killTrackedNow } from './cluster/processes.js'
import { failureSummary, startCluster } from '#tests/cluster_faults/helpers/cluster'

let teardown: (() => Promise<void>) | undefined
const log = (line: string) => console.log(`cluster faults: ${line}`)

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, async () => {
    console.error(`\ncluster faults: ${signal}, stopping the topology`)
    await teardown?.().catch(() => {})
    killTrackedNow()
    process.exit(130)
  })
}

const started = Date.now()
processCLIArgs(process.argv.splice(2))
configure({
  files: ['tests/cluster_faults/**/*.spec.ts'],
  plugins: [assert()],
  // Each test as it ends, then the slowest tests and the total.
  reporters: { activated: ['spec', 'timing'], list: [spec(), timing()] },
  timeout: 25 * 60_000,
  setup: [
    async () => {
      teardown = await startCluster(log)
      log(`topology up after ${((Date.now() - started) / 1000).toFixed(0)} s`)
      return async () => {
        await teardown?.()
        teardown = undefined
        killTrackedNow()
        log(`${((Date.now() - started) / 1000).toFixed(0)} s in all`)
      }
    },
  ],
})

await run()
// The failures once more, last: the reporter's code frames and stacks come after them otherwise.
if (failureSummary.length > 0) {
  console.log(
    `cluster faults: FAILED:\n  - ${failureSummary.map((f) => f.slice(0, 600)).join('\n  - ')}`
  )
}
// Whatever a test left open (a socket, a timer) must not keep CI waiting.
process.exit(process.exitCode ?? 0)
