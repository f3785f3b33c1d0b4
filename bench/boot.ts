/*
| Boots the application for a benchmark script, against its own database
| (BENCH_DATABASE, default gateway_bench; never DB_DATABASE) so that no
| development or test data is touched.
*/
import 'reflect-metadata'
import { Ignitor } from '@adonisjs/core'

process.env.NODE_ENV ??= 'development'
// Never DB_DATABASE: the benchmark wipes its database.
process.env.DB_DATABASE = process.env.BENCH_DATABASE ?? 'gateway_bench'
if (!process.env.DB_DATABASE.endsWith('_bench')) {
  throw new Error(
    `Refusing to wipe ${process.env.DB_DATABASE}: benchmark databases end with _bench`
  )
}
process.env.LOG_LEVEL ??= 'warn'

const APP_ROOT = new URL('../', import.meta.url)

export async function bootForBenchmark() {
  const ignitor = new Ignitor(APP_ROOT, {
    importer: (filePath: string) =>
      filePath.startsWith('./') || filePath.startsWith('../')
        ? import(new URL(filePath, APP_ROOT).href)
        : import(filePath),
  })
  const app = ignitor.createApp('console')
  app.booting(async () => {
    await import('#start/env')
  })
  await app.init()
  await app.boot()
  await app.start(async () => {})

  const ace = await app.container.make('ace')
  for (const [name, args] of [
    ['db:create', []],
    ['db:wipe', ['--force']],
    ['migration:run', ['--force', '--compact-output', '--no-schema-generate']],
  ] as const) {
    const command = await ace.exec(name, [...args])
    if (command.exitCode) throw command.error ?? new Error(`${name} failed`)
  }
  return app
}
