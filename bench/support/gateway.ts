/*
| The compiled gateway's processes for benchmarks, as production runs them:
| `node build/bin/server.js` (NODE_ENV=production, HTTPS from certificate
| files, WEB_CONCURRENCY web processes) and `node build/ace.js queue:work`,
| plus any other child (the bare baseline), with their RSS followed.
*/
import { INSPECT_PORT } from './alloc_profile.js'
import { spawn, type ChildProcess } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { request as httpsRequest } from 'node:https'
import { join } from 'node:path'
import { BUILD, ROOT } from './build.js'
import { heapFlags } from '../../bin/heap_flags.js'
import { childPids, procCpuSeconds, procStatus, resetPeakRss } from './proc.js'

export interface Tls {
  cert: string
  certPath: string
  keyPath: string
}

/** A fresh self-signed certificate, written to `directory` for the servers. */
export async function writeCertificate(directory: string): Promise<Tls> {
  const { generateSelfSignedCertificate } = await import('#core/tls_certificate')
  const pair = await generateSelfSignedCertificate()
  const certPath = join(directory, 'cert.pem')
  const keyPath = join(directory, 'key.pem')
  await writeFile(certPath, pair.cert)
  await writeFile(keyPath, pair.key, { mode: 0o600 })
  return { cert: pair.cert, certPath, keyPath }
}

export interface Child {
  name: string
  pid: number
  /** The processes that do the work: the cluster workers, or the process itself. */
  workers(): number[]
  stop(): Promise<number | null>
  exited: Promise<number | null>
}

/** Children still running; killed if the benchmark exits without stopping them (a crash). */
const running = new Set<ChildProcess>()
process.on('exit', () => {
  for (const child of running) {
    for (const pid of childPids(child.pid!)) killQuietly(pid)
    child.kill('SIGKILL')
  }
})

function killQuietly(pid: number) {
  try {
    process.kill(pid, 'SIGKILL')
  } catch {} // already gone
}

/** Spawns a child whose output is prefixed on stderr; stop() is SIGTERM, then SIGKILL after 20 s. */
export function startChild(
  name: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; quiet?: boolean }
): Child {
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const forward = (chunk: Buffer) => {
    if (!options.quiet) process.stderr.write(`[${name}] ${chunk}`)
  }
  child.stdout!.on('data', forward)
  child.stderr!.on('data', forward)
  running.add(child)
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      running.delete(child)
      resolve(code)
    })
  )
  return {
    name,
    pid: child.pid!,
    exited,
    workers() {
      const children = childPids(child.pid!)
      return children.length > 0 ? children : [child.pid!]
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode
      child.kill('SIGTERM')
      const code = await Promise.race([
        exited,
        new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 20_000)),
      ])
      if (code === 'timeout') {
        for (const pid of childPids(child.pid!)) killQuietly(pid)
        child.kill('SIGKILL')
        throw new Error(`${name} did not stop within 20 s of SIGTERM`)
      }
      if (code !== 0) console.error(`${name} exited with status ${code}`)
      return code
    },
  }
}

/** The environment shared by the gateway's processes in a benchmark. */
export function gatewayEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    LOG_PRETTY: 'false',
    API_RATE_LIMIT_PER_MERCHANT: '100000000',
    API_RATE_LIMIT_PER_IP: '100000000',
    ...extra,
  }
  for (const name of ['TLS_SELF_SIGNED', 'TRUSTED_PROXIES']) delete env[name]
  return env
}

/**
 * The web process's heap bounds, as production starts it (docs/operations.md,
 * "Memory"): without them V8 lets a busy process's heap grow to several
 * times what it keeps alive (470 MiB under load, 168 MiB at rest).
 */
export const WEB_HEAP_FLAGS = envFlags('WEB_HEAP_FLAGS') ?? heapFlags('WEB_HEAP_FLAGS')

/** `node build/bin/server.js` with `webConcurrency` web processes, ready when /health answers. */
export async function startWeb(options: {
  port: number
  tls: Tls
  webConcurrency: number
  env: Record<string, string>
}) {
  // ALLOC_PROFILE: the inspector, for the allocation sampler (bench/support/alloc_profile.ts).
  const inspect = process.env.ALLOC_PROFILE === '1' ? [`--inspect=127.0.0.1:${INSPECT_PORT}`] : []
  const web = startChild('web', [...WEB_HEAP_FLAGS, ...inspect, 'bin/server.js'], {
    cwd: BUILD,
    env: gatewayEnv({
      ...options.env,
      PORT: String(options.port),
      TLS_CERT_PATH: options.tls.certPath,
      TLS_KEY_PATH: options.tls.keyPath,
      WEB_CONCURRENCY: String(options.webConcurrency),
    }),
  })
  await waitUntilListening(options.port, web.exited)
  // Every cluster worker has its app booted once each answered; give the others a moment.
  const deadline = Date.now() + 30_000
  while (options.webConcurrency > 1 && Date.now() < deadline) {
    if (childPids(web.pid).length >= options.webConcurrency) break
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  return web
}

/** The worker's heap bounds, as production starts it (docs/operations.md, "Memory"). */
export const WORKER_HEAP_FLAGS = envFlags('WORKER_HEAP_FLAGS') ?? heapFlags('WORKER_HEAP_FLAGS')

/** More node flags of the worker (WORKER_FLAGS, e.g. `--cpu-prof --cpu-prof-dir=DIR` for a profile). */
const WORKER_FLAGS = envFlags('WORKER_FLAGS') ?? []

/** Node flags from the environment variable `name`, when it is set. */
function envFlags(name: string) {
  return process.env[name]?.split(' ').filter(Boolean)
}

/** `node build/ace.js queue:work` (the background worker). */
export function startWorker(env: Record<string, string>, args: string[] = []) {
  return startChild(
    'worker',
    [...WORKER_HEAP_FLAGS, ...WORKER_FLAGS, 'ace.js', 'queue:work', ...args],
    {
      cwd: BUILD,
      env: gatewayEnv(env),
    }
  )
}

/** Starts a child from the project's TypeScript sources (bench/baseline.ts). */
export function startTsChild(name: string, file: string, env: NodeJS.ProcessEnv) {
  return startChild(name, ['--import', '@poppinss/ts-exec', file], { cwd: ROOT, env })
}

export async function waitUntilListening(port: number, exited: Promise<number | null>) {
  let gone = false
  void exited.then(() => (gone = true))
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline && !gone) {
    const answered = await new Promise<boolean>((resolve) => {
      const req = httpsRequest(
        {
          host: '127.0.0.1',
          port,
          path: '/health',
          method: 'GET',
          rejectUnauthorized: false,
        },
        (res) => {
          res.resume()
          resolve(true)
        }
      )
      req.on('error', () => resolve(false))
      req.end()
    })
    if (answered) return
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  throw new Error(
    gone ? `the process on port ${port} exited at start` : `nothing listened on ${port} within 60 s`
  )
}

/**
 * Follows the RSS of a child's working processes: the largest one now, and
 * the largest peak since start() (VmHWM, reset at start; sampled every 100 ms
 * where /proc/<pid>/clear_refs cannot be written).
 */
export class RssWatch {
  #sampled = 0
  #timer?: NodeJS.Timeout
  #reset = false
  constructor(private child: Child) {}

  /** The largest RSS among the working processes, now (bytes). */
  now() {
    return Math.max(0, ...this.child.workers().map((pid) => procStatus(pid).rss))
  }

  start() {
    this.#reset = this.child.workers().every((pid) => resetPeakRss(pid))
    this.#sampled = this.now()
    this.#timer = setInterval(() => (this.#sampled = Math.max(this.#sampled, this.now())), 100)
  }

  /** The largest peak since start() (bytes). */
  stop() {
    clearInterval(this.#timer)
    const hwm = Math.max(0, ...this.child.workers().map((pid) => procStatus(pid).hwm))
    return this.#reset ? Math.max(hwm, this.#sampled) : Math.max(this.#sampled, this.now())
  }
}

/**
 * CPU time (user + system) the working processes of a child spent between
 * start() and stop(), per request served: steadier than a rate when the VM is
 * busy (though a slower host still inflates it), so a change's effect shows
 * in alternating runs.
 */
export class CpuWatch {
  #spent = 0
  #since?: number
  constructor(private child: Child) {}

  #seconds() {
    return this.child.workers().reduce((total, pid) => total + procCpuSeconds(pid), 0)
  }

  start() {
    this.#spent = 0
    this.#since = this.#seconds()
  }

  /** Stops counting until resume(): a load measured in turns with another counts its turns only. */
  pause() {
    if (this.#since === undefined) return
    this.#spent += this.#seconds() - this.#since
    this.#since = undefined
  }

  resume() {
    this.#since ??= this.#seconds()
  }

  /** Milliseconds of CPU per request counted since start(). */
  stop(requests: number) {
    this.pause()
    return requests > 0 ? (this.#spent * 1000) / requests : 0
  }
}
