import { test } from '@japa/runner'
import { outageScenario } from '#tests/faults/helpers/outage'
import { Scenario } from '#tests/faults/helpers/scenario'
import { world } from '#tests/faults/helpers/world'

test.group('e. MariaDB outage', () => {
  test('MariaDB killed under load and restarted: fast 503s, recovery without restarts, every order final', async ({
    assert,
  }) => {
    const s = new Scenario('e. MariaDB stopped under load (SIGKILL) and restarted')
    try {
      await outageScenario(s, {
        label: 'mariadb-outage',
        stop: () => world().mariadb.stop('SIGKILL'),
        start: () => world().mariadb.start(),
      })
    } catch (error) {
      s.failures.push(`harness: ${(error as Error).stack ?? error}`)
    } finally {
      await s.close(assert)
    }
  })
})
