/*
| Boots the application for a benchmark script, against its own database
| (gateway_bench unless DB_DATABASE says otherwise) so that no development or
| test data is touched.
*/
import 'reflect-metadata'
import { Ignitor } from '@adonisjs/core'

process.env.NODE_ENV ??= 'development'
process.env.DB_DATABASE ??= 'gateway_bench'
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
