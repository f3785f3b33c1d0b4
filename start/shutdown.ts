import { Server as NetServer, type Socket } from 'node:net'
import type { Server } from 'node:http'
import { Server as HttpsServer } from 'node:https'

type Terminable = { terminate(): Promise<void> }

/**
 * SHUTDOWN_TIMEOUT_MS (default 10 s), read when a signal arrives: by then
 * .env has been loaded into process.env. Entry points read it before the
 * application (and its config) exists, like the TLS settings.
 */
export function shutdownTimeoutMs() {
  return Number(process.env.SHUTDOWN_TIMEOUT_MS || 10_000)
}

/** Time kept for closing the database and Redis once the connections are drained. */
const TERMINATE_RESERVE_MS = 1500

/**
 * How the gateway's processes stop. On SIGTERM, SIGINT or SIGHUP the process
 * first drains its HTTP connections (if it serves any), then terminates the
 * application (running jobs finish, MySQL and Redis connections close), all
 * within `timeoutMs` whatever happens: a process that an orchestrator or
 * `npm start` asked to stop must stop, even with clients still sending on
 * keep-alive connections or Redis unreachable. A second signal stops at once.
 */
export function stopOnSignals(
  app: Terminable,
  options: {
    drain?: (timeoutMs: number) => Promise<void>
    log?: (message: string) => void
  } = {}
) {
  const log = options.log ?? ((message: string) => process.stderr.write(`${message}\n`))
  let stopping = false
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) {
      process.exit(process.exitCode ?? 1)
    }
    stopping = true
    const timeoutMs = shutdownTimeoutMs()
    log(`${signal} received, stopping (at most ${timeoutMs} ms)`)
    setTimeout(() => {
      log(`still running ${timeoutMs} ms after ${signal}, exiting`)
      process.exit(1)
    }, timeoutMs).unref()
    try {
      await options.drain?.(Math.max(0, timeoutMs - TERMINATE_RESERVE_MS))
      await app.terminate()
    } catch (error) {
      log(`error while stopping: ${error}`)
      process.exitCode = 1
    }
    // Everything was closed in order; a handle someone forgot must not keep the process up.
    process.exit(process.exitCode ?? 0)
  }
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, stop)
}

/** A connection idle for this long is closed while draining; a busier one finishes first. */
const IDLE_GRACE_MS = 1000

/**
 * How long a draining server keeps its listening socket open. Closing it
 * resets every connection the kernel has queued but the process not yet
 * accepted, and a client that opened one just before the signal (one
 * connection per request is common) would see its request reset. Meanwhile
 * new connections are accepted and answered with `Connection: close`.
 */
const LISTEN_GRACE_MS = 250

/**
 * Lets HTTP(S) servers finish what they are doing without taking more. When
 * draining starts, a server answers every request with `Connection: close`
 * (so that the client closes after it), stops listening LISTEN_GRACE_MS
 * later, and closes a keep-alive connection once it has been idle for a
 * second. Not at once: a client may be sending on a connection that looks
 * idle (bytes still in TLS), and closing it then would reset a request the
 * merchant believes was sent. A connection still in its TLS handshake counts
 * as busy. Whatever is still open at the deadline is cut.
 */
export function drainer() {
  const servers: Server[] = []
  /** Connections that carry requests (for HTTPS: once the TLS handshake is done). */
  const sockets = new Map<Socket, { busy: number; idleSince: number }>()
  /** Every accepted TCP connection until it closes, handshake or not. */
  const accepted = new Set<Socket>()
  let draining = false

  return {
    track(server: Server) {
      servers.push(server)
      server.on('connection', (raw: Socket) => {
        accepted.add(raw)
        raw.once('close', () => accepted.delete(raw))
      })
      const connectionEvent = server instanceof HttpsServer ? 'secureConnection' : 'connection'
      server.on(connectionEvent, (socket: Socket) => {
        sockets.set(socket, { busy: 0, idleSince: Date.now() })
        socket.once('close', () => sockets.delete(socket))
      })
      server.on('request', (request, response) => {
        const state = sockets.get(request.socket)
        if (state) state.busy++
        if (draining && !response.headersSent) response.setHeader('Connection', 'close')
        response.once('close', () => {
          if (!state) return
          state.busy--
          state.idleSince = Date.now()
        })
      })
      return server
    },

    drain(timeoutMs: number): Promise<void> {
      draining = true
      const deadline = Date.now() + timeoutMs
      let listening = true
      // net.Server's close: stop listening without http's immediate close of
      // idle connections. After a timer, then after one more turn of the event
      // loop, whose poll phase accepts what the kernel queued meanwhile.
      setTimeout(
        () =>
          setImmediate(() => {
            for (const server of servers) NetServer.prototype.close.call(server)
            listening = false
          }),
        Math.min(LISTEN_GRACE_MS, timeoutMs)
      )
      return new Promise((resolve) => {
        const sweep = setInterval(() => {
          const now = Date.now()
          const idle: Socket[] = []
          if (now >= deadline) for (const raw of accepted) raw.destroy()
          for (const [socket, state] of sockets) {
            if (now >= deadline) socket.destroy()
            else if (state.busy === 0 && now - state.idleSince >= IDLE_GRACE_MS) idle.push(socket)
          }
          // Timers run before the event loop reads sockets: on a busy process a
          // request may already be waiting, unread, on a connection that looks
          // idle. setImmediate runs after that read, so such a connection is
          // busy again by then and is left to finish its answer.
          setImmediate(() => {
            for (const socket of idle) {
              const state = sockets.get(socket)
              if (state && state.busy === 0 && Date.now() - state.idleSince >= IDLE_GRACE_MS) {
                socket.end()
              }
            }
          })
          if ((!listening && accepted.size === 0 && sockets.size === 0) || now >= deadline) {
            clearInterval(sweep)
            resolve()
          }
        }, 100)
      })
    },
  }
}
