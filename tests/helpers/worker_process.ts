import { spawn, type ChildProcess } from 'node:child_process'
import app from '@adonisjs/core/services/app'

/**
 * Starts `queue:work` as its own process on the test database and Redis, as
 * an operator runs it. `stop` sends SIGTERM and resolves with the exit code.
 */
export function startWorkerProcess(env: Record<string, string> = {}, args: string[] = []) {
  const child: ChildProcess = spawn(process.execPath, ['ace.js', 'queue:work', ...args], {
    cwd: app.appRoot.pathname,
    env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
  return {
    child,
    exited,
    stop: async (signal: NodeJS.Signals = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      return exited
    },
  }
}
