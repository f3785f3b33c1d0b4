/*
| Process figures read from /proc (Linux): RSS, peak RSS, CPU time, children.
*/
import { readFileSync, writeFileSync } from 'node:fs'

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
