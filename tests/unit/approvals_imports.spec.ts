import { test } from '@japa/runner'
import { readdir, readFile } from 'node:fs/promises'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  approvableAction,
  approvableActionNames,
  requestedApprovableAction,
} from '#approvals/approvable_actions'
import { ActionError } from '#core/validation'

/*
 * The approvals core knows approvable actions only through its registry: the
 * actions import the core, never the other way round. An import from the
 * core into a domain that registers actions would bring the import circle
 * back (approvals → payments → approvals), so it fails here.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const CORE = join(ROOT, 'app', 'approvals')
const FORBIDDEN = ['payments', 'reconciliation', 'merchants', 'slips']

/** Every module specifier a file names: import/export … from, bare import, dynamic import(). */
function importedSpecifiers(source: string) {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '')
  const patterns = [
    /\b(?:import|export)\b[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]/g,
    /\bimport\s*['"]([^'"]+)['"]/g,
    /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
  ]
  return patterns.flatMap((pattern) => [...code.matchAll(pattern)].map((match) => match[1]))
}

/** The forbidden domain a specifier reaches (alias or relative path), or null. */
function forbiddenDomain(file: string, specifier: string) {
  const alias = /^#([a-z_]+)\//.exec(specifier)
  if (alias) return FORBIDDEN.includes(alias[1]) ? alias[1] : null
  if (!specifier.startsWith('.')) return null
  const [top, domain] = relative(ROOT, resolve(dirname(file), specifier)).split(sep)
  return top === 'app' && FORBIDDEN.includes(domain) ? domain : null
}

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true })
  const nested = await Promise.all(
    entries.map((entry) => {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) return sourceFiles(path)
      return Promise.resolve(/\.(ts|js)$/.test(entry.name) ? [path] : [])
    })
  )
  return nested.flat()
}

test.group('approvals core imports', () => {
  test('the specifier reader sees every form of import', ({ assert }) => {
    const specifiers = importedSpecifiers(`
      import type { A } from '#payments/a'
      import {
        b,
        type C,
      } from "#slips/b"
      import '#merchants/c'
      export { d } from '../reconciliation/d.js'
      const e = () => import('#payments/e')
      // import { f } from '#payments/f'
    `)
    assert.deepEqual(specifiers, [
      '#payments/a',
      '#slips/b',
      '../reconciliation/d.js',
      '#merchants/c',
      '#payments/e',
    ])
  })

  test('no file under app/approvals imports payments, reconciliation, merchants or slips', async ({
    assert,
  }) => {
    const files = await sourceFiles(CORE)
    assert.isAbove(files.length, 0)
    const offending: string[] = []
    for (const file of files) {
      for (const specifier of importedSpecifiers(await readFile(file, 'utf8'))) {
        if (forbiddenDomain(file, specifier)) {
          offending.push(`${relative(ROOT, file)} imports ${specifier}`)
        }
      }
    }
    assert.deepEqual(offending, [], 'the approvals core must not import the actions it runs')
  })
})

test.group('approvals registry', () => {
  test('the preload registered every approvable action in this process', ({ assert }) => {
    // Leaving out the ones a spec file registers for itself ("test.…", tests/functional/notifications.spec.ts).
    const names = approvableActionNames().filter((name) => !name.startsWith('test.'))
    // Each registered action, and whether every admin is told of its requests
    // (a change of where money goes, or of who may decide).
    const expected: Record<string, boolean> = {
      'payment.mark_paid': false,
      'statement_line.attach': false,
      'statement_line.credit_merchant': false,
      'statement.confirm': false,
      'payout.release_rejected': false,
      'payout.record_failure': false,
      'platform.enable_deposits': true,
      'platform.four_eyes_threshold': true,
      'platform.payment_page_domain': true,
      'deposit_account.create': true,
      'deposit_account.update': true,
      'merchant.settlement_accounts': true,
      'merchant.ip_whitelist': true,
      'merchant.configure': true,
      'merchant.rotate_credentials': true,
      'merchant.schedule_rotation': true,
      'statement_line.return': true,
      'operator.create': true,
      'operator.raise': true,
      'operator.enable': true,
      'operator.reset_2fa': true,
      'operator.new_link': true,
      'statement_layout.save': true,
      'statement_source.save': true,
    }
    assert.sameMembers(names, Object.keys(expected))
    assert.deepEqual(
      Object.fromEntries(names.map((name) => [name, approvableAction(name).sensitive === true])),
      expected
    )
    assert.equal(approvableAction('statement_line.attach').kind, 'line_decision')
    assert.isFunction(approvableAction('payment.mark_paid').approvable)
    assert.isFunction(approvableAction('statement_line.attach').approvable)
    assert.isUndefined(approvableAction('statement_line.credit_merchant').approvable)
  })

  test('an unregistered action fails loudly; one an operator names is a field error', ({
    assert,
  }) => {
    assert.throws(
      () => approvableAction('payment.refund'),
      /no approvable action registered for "payment.refund"/
    )
    assert.throws(() => requestedApprovableAction('payment.refund'), ActionError)
  })
})
