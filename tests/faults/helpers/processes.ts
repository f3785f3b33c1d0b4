import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process'
import { createWriteStream, writeFileSync, type WriteStream } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { readFile, readdir } from 'node:fs/promises'
import { join } from 'node:path'

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Thrown by a check of until() to stop waiting at once (the process it waits for died). */
export class StopWaiting extends Error {}

/**
 * Polls `check` until it returns true or `timeoutMs` passes; returns whether
 * it did. A check that throws counts as false (the service is not up yet),
 * except with StopWaiting, which is passed on.
 */
export async function until(
  check: () => Promise<boolean> | boolean,
  timeoutMs: number,
  everyMs = 200
) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      if (await check()) return true
    } catch (error) {
      if (error instanceof StopWaiting) throw error
    }
    if (Date.now() >= deadline) return false
    await sleep(everyMs)
  }
}

export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  await new Promise((resolve) => server.close(resolve))
  return port
}

export interface ExitInfo {
  code: number | null
  signal: NodeJS.Signals | null
}

/**
 * A child process of the suite. Each one leads its own process group so that
 * it can be stopped with everything it started; its output goes to a log file
 * of the run (shown when a scenario fails). Every live process is recorded in
 * a pid file read by the watchdog, which kills them if the runner itself dies.
 */
export class ManagedProcess {
  readonly child: ChildProcess
  readonly exited: Promise<ExitInfo>
  exit?: ExitInfo
  readonly logFile: string
  readonly #log: WriteStream

  constructor(
    readonly name: string,
    command: string,
    args: string[],
    options: SpawnOptions & { logFile: string }
  ) {
    this.#log = createWriteStream(options.logFile, { flags: 'a' })
    this.child = spawn(command, args, {
      ...options,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    this.child.stdout?.pipe(this.#log, { end: false })
    this.child.stderr?.pipe(this.#log, { end: false })
    this.logFile = options.logFile
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.exit = { code, signal }
        registry.delete(this)
        writePidFile()
        resolve(this.exit)
      })
      this.child.once('error', () => {
        this.exit ??= { code: -1, signal: null }
        registry.delete(this)
        writePidFile()
        resolve(this.exit)
      })
    })
    registry.add(this)
    writePidFile()
  }

  get pid() {
    return this.child.pid!
  }

  get alive() {
    return this.exit === undefined
  }

  signal(signal: NodeJS.Signals) {
    if (this.alive) this.child.kill(signal)
  }

  /** Sends a signal to the whole process group (the process and its children). */
  signalGroup(signal: NodeJS.Signals) {
    try {
      process.kill(-this.pid, signal)
    } catch {}
  }

  /** Resolves with the exit after `signal`, or undefined if it is still alive after `timeoutMs`. */
  async waitExit(timeoutMs: number): Promise<ExitInfo | undefined> {
    if (!this.alive) return this.exit
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), timeoutMs)
    })
    const result = await Promise.race([this.exited, timeout])
    clearTimeout(timer)
    return result
  }

  /** SIGTERM (or `signal`), then SIGKILL to the group after `graceMs`. Returns ms until exit. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', graceMs = 10_000) {
    const started = Date.now()
    if (!this.alive) return 0
    this.signal(signal)
    if (!(await this.waitExit(graceMs))) {
      this.signalGroup('SIGKILL')
      await this.exited
    }
    return Date.now() - started
  }

  async kill() {
    this.signalGroup('SIGKILL')
    this.signal('SIGKILL')
    await this.exited
  }

  /** The last `lines` lines of the process's output. */
  async tail(lines = 30) {
    const text = await readFile(this.logFile, 'utf8').catch(() => '')
    return text.trimEnd().split('\n').slice(-lines).join('\n')
  }
}

const registry = new Set<ManagedProcess>()
let pidFile: string | undefined

function writePidFile() {
  if (!pidFile) return
  writeFileSync(pidFile, [...registry].map((proc) => proc.pid).join('\n') + '\n')
}

/**
 * A detached shell that outlives the runner: once the runner's pid is gone
 * (crash, SIGKILL, closed terminal), it kills every process group still listed
 * in the pid file and removes the run's directory. Normal runs stop everything
 * themselves and the watchdog then finds nothing to do.
 */
export function startWatchdog(runDirectory: string) {
  pidFile = join(runDirectory, 'pids')
  writePidFile()
  const script = `
    while kill -0 "$1" 2>/dev/null; do sleep 1; done
    for pid in $(cat "$2" 2>/dev/null); do kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null; done
    sleep 1
    rm -rf "$3"
  `
  const watchdog = spawn(
    'bash',
    ['-c', script, 'faults-watchdog', String(process.pid), pidFile, runDirectory],
    {
      detached: true,
      stdio: 'ignore',
    }
  )
  watchdog.unref()
}

/** Kills every process the suite started that is still alive. */
export async function killAll() {
  await Promise.all([...registry].map((proc) => proc.kill()))
}

/** Pids of every descendant of `pid` (children, grandchildren, ...), from /proc. */
export async function descendants(pid: number): Promise<number[]> {
  const parents = new Map<number, number[]>()
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '')
    // Field 4 is the parent pid; the command name (field 2) may hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const parent = Number(fields[1])
    if (!parents.has(parent)) parents.set(parent, [])
    parents.get(parent)!.push(Number(entry))
  }
  const found: number[] = []
  const queue = [pid]
  while (queue.length > 0) {
    for (const child of parents.get(queue.shift()!) ?? []) {
      found.push(child)
      queue.push(child)
    }
  }
  return found
}

/** Whether `pid` is a live process (a zombie counts as gone). */
export async function isAlive(pid: number) {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '')
  if (!stat) return false
  return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z'
}

/** The command line of `pid`, for reports. */
export async function commandLine(pid: number) {
  const raw = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')
  return raw.split('\0').filter(Boolean).join(' ')
}
