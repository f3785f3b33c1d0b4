import { assert } from '@japa/assert'
import app from '@adonisjs/core/services/app'
import type { Config } from '@japa/runner/types'
import { pluginAdonisJS } from '@japa/plugin-adonisjs'
import { spec } from '@japa/runner/reporters'
import { startTestServers } from '#tests/helpers/servers'
import { timing } from '#tests/helpers/timing_reporter'

export const plugins: Config['plugins'] = [assert(), pluginAdonisJS(app)]

/** Each test as it ends, then the slowest tests and files and the total. */
export const reporters: Config['reporters'] = {
  activated: ['spec', 'timing'],
  list: [spec(), timing()],
}

/**
 * The test database is created when missing and rebuilt from the migrations
 * once per run (a sharded run has one database per process); each test
 * group truncates what it touches (tests that run concurrent requests cannot
 * live inside one wrapping transaction). Migration locks are MySQL advisory
 * locks, global to the server: they are disabled so that two runs on two test
 * databases do not block each other.
 */
async function rebuildTestDatabase() {
  const ace = await app.container.make('ace')
  // Not migration:fresh: it hands --disable-locks on to db:wipe, which refuses it.
  for (const [name, args] of [
    ['db:create', []],
    ['db:wipe', []],
    ['migration:run', ['--disable-locks', '--compact-output', '--no-schema-generate']],
  ] as const) {
    const command = await ace.exec(name, [...args])
    if (command.exitCode) throw command.error ?? new Error(`${name} failed`)
  }
}

export const runnerHooks: Required<Pick<Config, 'setup' | 'teardown'>> = {
  setup: [rebuildTestDatabase],
  teardown: [],
}

export const configureSuite: Config['configureSuite'] = (suite) => {
  if (['functional', 'browser', 'e2e'].includes(suite.name)) {
    return suite.setup(() => startTestServers())
  }
}
