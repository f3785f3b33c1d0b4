/*
| HTTP server entry point. The node server is HTTPS when a certificate is
| configured (or, outside production, a generated self-signed one), and plain
| HTTP only when TLS is terminated by a trusted proxy (see docs/operations.md).
|
| WEB_CONCURRENCY=n (n > 1) runs n web processes sharing the port through
| node:cluster: this process then only supervises them (see superviseWorkers).
*/
const { default: cluster } = await import('node:cluster')

// Load .env into process.env first: the TLS settings and WEB_CONCURRENCY are read before the app boots.
await import('#start/env')
const webConcurrency = Math.max(1, Math.floor(Number(process.env.WEB_CONCURRENCY || 1)) || 1)

if (cluster.isPrimary && webConcurrency > 1) {
  await superviseWorkers(webConcurrency)
} else {
  await serve()
}

async function serve() {
  await import('reflect-metadata')
  const { Ignitor, prettyPrintError } = await import('@adonisjs/core')

  const APP_ROOT = new URL('../', import.meta.url)

  const IMPORTER = (filePath: string) => {
    if (filePath.startsWith('./') || filePath.startsWith('../')) {
      return import(new URL(filePath, APP_ROOT).href)
    }
    return import(filePath)
  }

  const { createNodeServerFactory } = await import('#start/node_server')
  const { drainer, stopOnSignals } = await import('#start/shutdown')
  const serverFactory = await createNodeServerFactory(APP_ROOT)
  const connections = drainer()

  if (cluster.isWorker) {
    // The supervisor asks for a graceful stop by message: a signal would count
    // as a second one (stop at once) when this process already got its own,
    // e.g. Ctrl-C reaching the whole process group.
    let stopping = false
    for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
      process.on(signal, () => (stopping = true))
    }
    process.on('message', (message) => {
      if (message === 'gateway:stop' && !stopping) process.kill(process.pid, 'SIGTERM')
    })
  }

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
    .then(async () => {
      const { releaseBootMemory } = await import('#core/boot_memory')
      releaseBootMemory()
    })
    .catch((error) => {
      process.exitCode = 1
      prettyPrintError(error)
    })
}

/**
 * The supervisor of WEB_CONCURRENCY web processes (node:cluster workers
 * sharing the listening port; the primary hands out connections in turn).
 * SIGTERM, SIGINT or SIGHUP asks every worker to stop gracefully (each drains
 * its connections and terminates its app, as a single process does) and exits
 * once they all have, with status 1 if any failed; a second signal stops them
 * at once. A worker that exits by itself stops the others and the supervisor
 * (status 1), as `npm start` does when one of its processes stops: the
 * orchestrator restarts the whole, rather than a half-size server living on.
 */
async function superviseWorkers(count: number) {
  const { shutdownTimeoutMs } = await import('#start/shutdown')
  const log = (message: string) =>
    process.stderr.write(
      `${JSON.stringify({ level: 40, time: Date.now(), pid: process.pid, msg: `web supervisor: ${message}` })}\n`
    )
  let stopping = false
  let exitCode = 0
  let running = 0

  const stopAll = (reason: string) => {
    if (stopping) {
      // Second signal: the workers stop at once, as a single process would.
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM')
      return
    }
    stopping = true
    const timeoutMs = shutdownTimeoutMs()
    log(`${reason}, stopping ${running} web processes`)
    for (const worker of Object.values(cluster.workers ?? {})) {
      if (worker?.isConnected()) worker.send('gateway:stop')
      else worker?.process.kill('SIGTERM')
    }
    // Each worker keeps its own deadline; this one only catches a stuck worker.
    setTimeout(() => {
      log(`web processes still running ${timeoutMs + 2000} ms after ${reason}, killing`)
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGKILL')
      process.exit(1)
    }, timeoutMs + 2000).unref()
  }

  cluster.on('exit', (worker, code, signal) => {
    if (code !== 0 || signal) exitCode = 1
    if (!stopping) {
      exitCode = 1
      stopAll(`web process ${worker.process.pid} exited (${signal ?? code})`)
    }
    running--
    if (running === 0) process.exit(exitCode)
  })
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    process.on(signal, () => stopAll(`${signal} received`))
  }
  for (let index = 0; index < count; index++) {
    cluster.fork()
    running++
  }
}
