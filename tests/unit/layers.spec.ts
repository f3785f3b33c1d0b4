import { test } from '@japa/runner'
import { readdir, readFile } from 'node:fs/promises'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { circles, importGraph } from '../../bin/import_graph.js'

/*
 * The layers of app/ (docs/architecture.md, "Layers"): dependencies point
 * from the edges to the domains and from the domains to core, never back.
 * Each rule below is read off the code's own imports, so a file that breaks
 * one fails here with the import that does.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const APP = join(ROOT, 'app')

/** The surfaces over the domains: HTTP (merchant API, payment page, back-office), jobs, metrics' readers. */
const EDGES = new Set([
  'admin',
  'merchant_api',
  'payment_page',
  'jobs',
  'metrics',
  'exceptions',
  'middleware',
])

/**
 * Instruments every layer may use: the metric families and the job timers.
 * They import nothing of the gateway's own (checked below).
 */
const INSTRUMENTS = new Set(['app/metrics/registry.ts', 'app/metrics/job_metrics.ts'])

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

/** The file of app/ a specifier names (`app/<folder>/…`), or null for a package, config or start. */
function appTarget(file: string, specifier: string): string | null {
  const alias = /^#([a-z_]+)\/(.+)$/.exec(specifier)
  if (alias) {
    if (
      ['config', 'start', 'generated', 'database', 'tests', 'client', 'providers'].includes(
        alias[1]
      )
    ) {
      return null
    }
    return `app/${alias[1]}/${alias[2].replace(/\.js$/, '')}.ts`
  }
  if (!specifier.startsWith('.')) return null
  const path = relative(ROOT, resolve(dirname(file), specifier))
    .split(sep)
    .join('/')
  return path.startsWith('app/') ? path.replace(/\.js$/, '.ts') : null
}

const folderOf = (appPath: string) => appPath.split('/')[1]

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true })
  const nested = await Promise.all(
    entries.map((entry) => {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) return sourceFiles(path)
      return Promise.resolve(/\.ts$/.test(entry.name) ? [path] : [])
    })
  )
  return nested.flat()
}

/** Every import from one folder of app/ into another, as `app/x/file.ts → app/y/file.ts`. */
async function crossings() {
  const found: Array<{ from: string; to: string; specifier: string }> = []
  for (const file of await sourceFiles(APP)) {
    const from = relative(ROOT, file).split(sep).join('/')
    for (const specifier of importedSpecifiers(await readFile(file, 'utf8'))) {
      const to = appTarget(file, specifier)
      if (to && folderOf(to) !== folderOf(from)) found.push({ from, to, specifier })
    }
  }
  return found
}

const describe = (items: Array<{ from: string; specifier: string }>) =>
  items.map(({ from, specifier }) => `${from} imports ${specifier}`)

test.group('layers of app/', () => {
  test('the reader sees aliases and relative paths across folders', async ({ assert }) => {
    const file = join(APP, 'payments', 'actions', 'x.ts')
    assert.equal(
      appTarget(file, '#admin/queries/order_search'),
      'app/admin/queries/order_search.ts'
    )
    assert.equal(
      appTarget(file, '../../admin/views/order_page.js'),
      'app/admin/views/order_page.ts'
    )
    assert.isNull(appTarget(file, '#config/slips'))
    assert.isNull(appTarget(file, '@adonisjs/lucid/services/db'))
    // The walk itself finds crossings (a broken one would pass every rule).
    assert.isAbove((await crossings()).length, 100)
  })

  test('core imports no domain and no edge', async ({ assert }) => {
    const wrong = (await crossings()).filter(
      ({ from, to }) => folderOf(from) === 'core' && !INSTRUMENTS.has(to)
    )
    assert.deepEqual(describe(wrong), [])
  })

  test('no domain imports an edge (the back-office, the merchant API, the payment page, jobs, metrics readers)', async ({
    assert,
  }) => {
    const wrong = (await crossings()).filter(
      ({ from, to }) =>
        !EDGES.has(folderOf(from)) && EDGES.has(folderOf(to)) && !INSTRUMENTS.has(to)
    )
    assert.deepEqual(describe(wrong), [])
  })

  test('the instruments import nothing of the gateway but each other', async ({ assert }) => {
    const wrong = (await crossings()).filter(
      ({ from, to }) => INSTRUMENTS.has(from) && !INSTRUMENTS.has(to)
    )
    assert.deepEqual(describe(wrong), [])
  })

  test("no circle of imports but the models' own relations (types included)", async ({
    assert,
  }) => {
    const { all } = await importGraph(APP)
    const found = circles(all).map((circle) =>
      circle.map((file) => relative(ROOT, file).split(sep).join('/'))
    )
    // The reader does find circles: the models' relations are one.
    assert.isAbove(found.length, 0)
    const wrong = found.filter((circle) => !circle.every((file) => file.includes('/models/')))
    assert.deepEqual(
      wrong.map((circle) => circle.join(' <-> ')),
      []
    )
  })
})
