/*
| HTTP server entry point. The node server is HTTPS when a certificate is
| configured (or, outside production, a generated self-signed one), and plain
| HTTP only when TLS is terminated by a trusted proxy (see docs/operations.md).
*/
await import('reflect-metadata')
const { Ignitor, prettyPrintError } = await import('@adonisjs/core')

const APP_ROOT = new URL('../', import.meta.url)

const IMPORTER = (filePath: string) => {
  if (filePath.startsWith('./') || filePath.startsWith('../')) {
    return import(new URL(filePath, APP_ROOT).href)
  }
  return import(filePath)
}

// Load .env into process.env first: the TLS settings are read before the app boots.
await import('#start/env')
const { createNodeServerFactory } = await import('#start/node_server')
const { drainer, stopOnSignals } = await import('#start/shutdown')
const serverFactory = await createNodeServerFactory(APP_ROOT)
const connections = drainer()

new Ignitor(APP_ROOT, { importer: IMPORTER })
  .tap((app) => {
    app.booting(async () => {
      await import('#start/env')
    })
    stopOnSignals(app, {
      drain: connections.drain,
      log: (message) =>
        app.container
          .make('logger')
          .then((logger) => logger.warn(message))
          .catch(() => process.stderr.write(`${message}\n`)),
    })
  })
  .httpServer()
  .start((handler) => connections.track(serverFactory(handler)))
  .catch((error) => {
    process.exitCode = 1
    prettyPrintError(error)
  })
