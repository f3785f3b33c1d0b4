/*
| Process figures read from /proc (Linux): RSS, peak RSS, CPU time, children.
*/
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'

export function readFileSyncSafe(path: string) {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return ''
  }
}

/** VmRSS and VmHWM (peak) of a process, in bytes; 0 when it is gone. */
export function procStatus(pid: number) {
  const text = readFileSyncSafe(`/proc/${pid}/status`)
  const kib = (name: string) =>
    Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0)
  return { rss: kib('VmRSS') * 1024, hwm: kib('VmHWM') * 1024 }
}

/** Resets VmHWM to the current RSS (Linux 4.0+), so that it is this run's peak. */
export function resetPeakRss(pid: number) {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5')
    return true
  } catch {
    return false
  }
}

/** User + system CPU seconds of a process. */
export function procCpuSeconds(pid: number) {
  const fields = readFileSyncSafe(`/proc/${pid}/stat`).split(') ')[1]?.split(' ') ?? []
  // utime and stime are fields 14 and 15 of the line; 12 and 13 after "pid (comm) ".
  return (Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) / 100
}

/** Busy CPU seconds of the whole machine, all cores (/proc/stat; USER_HZ is 100). */
function machineBusySeconds() {
  const [user, nice, system, , , irq, softirq] = readFileSyncSafe('/proc/stat')
    .split('\n')[0]
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number)
  return (user + nice + system + irq + softirq) / 100
}

/** Pids of the processes whose command name is `name` (e.g. mariadbd). */
function pidsNamed(name: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => readFileSyncSafe(`/proc/${pid}/comm`).trim() === name)
    .map(Number)
}

/** CPU of the whole machine and of its parts (seconds, or ms per request once divided). */
interface CpuSeconds {
  machine: number
  mariadb: number
  redis: number
  loader: number
}

/**
 * Where the machine's CPU went during a run, per request: all cores
 * together, and of that MariaDB, Redis and the loader (this process). On a
 * machine whose cores are all busy, the rate is the cores' count divided by
 * the whole (every process on it shares them).
 */
export class MachineCpu {
  #servers = { mariadb: pidsNamed('mariadbd'), redis: pidsNamed('redis-server') }
  #spent: CpuSeconds = { machine: 0, mariadb: 0, redis: 0, loader: 0 }
  #since?: CpuSeconds
  #started = false

  #read(): CpuSeconds {
    const of = (pids: number[]) => pids.reduce((total, pid) => total + procCpuSeconds(pid), 0)
    const own = process.cpuUsage()
    return {
      machine: machineBusySeconds(),
      mariadb: of(this.#servers.mariadb),
      redis: of(this.#servers.redis),
      loader: (own.user + own.system) / 1e6,
    }
  }

  start() {
    this.#spent = { machine: 0, mariadb: 0, redis: 0, loader: 0 }
    this.#started = true
    this.#since = this.#read()
  }

  /** Stops counting until resume(): a load measured in turns with another counts its turns only. */
  pause() {
    if (!this.#since) return
    const now = this.#read()
    for (const key of KEYS) this.#spent[key] += now[key] - this.#since[key]
    this.#since = undefined
  }

  resume() {
    this.#since ??= this.#read()
  }

  /** Milliseconds of CPU per request counted since start(), by part. */
  stop(requests: number): CpuSeconds {
    if (!this.#started) throw new Error('MachineCpu.stop() without start()')
    this.pause()
    const per = (key: keyof CpuSeconds) => (requests > 0 ? (this.#spent[key] * 1000) / requests : 0)
    return {
      machine: per('machine'),
      mariadb: per('mariadb'),
      redis: per('redis'),
      loader: per('loader'),
    }
  }
}

const KEYS = ['machine', 'mariadb', 'redis', 'loader'] as const

/** "3.10 ms (MariaDB 0.90, Redis 0.10, loader 0.40)" */
export function machineCpuText(cpu: CpuSeconds) {
  return `${cpu.machine.toFixed(2)} ms (MariaDB ${cpu.mariadb.toFixed(2)}, Redis ${cpu.redis.toFixed(2)}, loader ${cpu.loader.toFixed(2)})`
}

/** The direct children of a process (e.g. the node:cluster workers of a primary). */
export function childPids(pid: number): number[] {
  const text = readFileSyncSafe(`/proc/${pid}/task/${pid}/children`)
  return text.split(' ').filter(Boolean).map(Number)
}

export function percentile(sorted: number[], fraction: number) {
  if (sorted.length === 0) return 0
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * fraction) - 1)]
}

export function mib(bytes: number) {
  return Math.round(bytes / 1024 / 1024)
}
