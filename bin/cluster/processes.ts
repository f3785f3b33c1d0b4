import { spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import type { ManagedProcess } from '#tests/faults/helpers/processes'

export {
  ManagedProcess,
  StopWaiting,
  freePort,
  sleep,
  until,
} from '#tests/faults/helpers/processes'

/**
 * Every process of the local topology. Each one leads its own process group
 * (Ctrl-C in the terminal does not reach it), so the parent kills them all
 * when it exits, however it exits: a `npm run cluster` stopped with Ctrl-C or
 * a test run that throws must leave no database or Redis behind.
 */
const started = new Set<ManagedProcess>()
let hooked = false

export function track(proc: ManagedProcess) {
  started.add(proc)
  writePids()
  void proc.exited.then(() => {
    started.delete(proc)
    writePids()
  })
  if (!hooked) {
    hooked = true
    process.once('exit', killTrackedNow)
  }
  return proc
}

/** Synchronous: runs in the 'exit' handler, where nothing asynchronous happens any more. */
export function killTrackedNow() {
  for (const proc of started) {
    try {
      process.kill(-proc.pid, 'SIGKILL')
    } catch {}
    try {
      process.kill(proc.pid, 'SIGKILL')
    } catch {}
  }
  started.clear()
}

let pidFile: string | undefined

function writePids() {
  if (pidFile) writeFileSync(pidFile, [...started].map((proc) => proc.pid).join('\n') + '\n')
}

/**
 * A detached shell that outlives this process: once it is gone without
 * cleaning up (SIGKILL, a closed terminal), the shell kills every process
 * group still listed in `directory`/pids and removes `directory` when
 * `removeDirectory` is set.
 */
export function startWatchdog(directory: string, removeDirectory: boolean) {
  pidFile = `${directory}/pids`
  writePids()
  const script = `
    while kill -0 "$1" 2>/dev/null; do sleep 1; done
    for pid in $(cat "$2" 2>/dev/null); do kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null; done
    if [ "$4" = 1 ]; then sleep 1; rm -rf "$3"; fi
  `
  const watchdog = spawn(
    'bash',
    [
      '-c',
      script,
      'cluster-watchdog',
      String(process.pid),
      pidFile,
      directory,
      removeDirectory ? '1' : '0',
    ],
    { detached: true, stdio: 'ignore' }
  )
  watchdog.unref()
}
