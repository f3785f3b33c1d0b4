import { assert } from '@japa/assert'
import app from '@adonisjs/core/services/app'
import type { Config } from '@japa/runner/types'
import { pluginAdonisJS } from '@japa/plugin-adonisjs'
import testUtils from '@adonisjs/core/services/test_utils'
import { startTestServers } from '#tests/helpers/servers'

export const plugins: Config['plugins'] = [assert(), pluginAdonisJS(app)]

/**
 * The test database is migrated from scratch once per run; each test group
 * truncates what it touches (tests that run concurrent requests cannot live
 * inside one wrapping transaction).
 */
export const runnerHooks: Required<Pick<Config, 'setup' | 'teardown'>> = {
  setup: [() => testUtils.db().migrate()],
  teardown: [],
}

export const configureSuite: Config['configureSuite'] = (suite) => {
  if (['functional', 'browser', 'e2e'].includes(suite.name)) {
    return suite.setup(() => startTestServers())
  }
}
