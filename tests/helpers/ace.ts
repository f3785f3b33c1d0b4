import { AsyncLocalStorage } from 'node:async_hooks'
import { execFile } from 'node:child_process'
import { format, promisify } from 'node:util'
import app from '@adonisjs/core/services/app'
import { cliui } from '@adonisjs/core/ace'

const exec = promisify(execFile)

export interface AceResult {
  code: number
  stdout: string
  stderr: string
  output: string
}

/**
 * Runs an Ace command in the test process, through the application's own
 * kernel (as the bootstrap runs the migrations): the same parsing, validation
 * and command class as `node ace <command>`, against the test database and
 * Redis, without a cold Node process compiling TypeScript for every call
 * (2–3 s each). What the command prints (its logger and console.log) is
 * captured for that call alone, so concurrent calls do not mix their output.
 * Never throws on a failing command: the exit code is in `code`.
 *
 * A test whose point is a separate process (a cache another process must
 * notice, the binary an operator types) uses `aceProcess` instead.
 */
export async function ace(...args: string[]): Promise<AceResult> {
  captureConsole()
  const [name, ...argv] = args
  const output: Captured = { stdout: '', stderr: '', open: true }
  await captured.run(output, async () => {
    const kernel = await app.container.make('ace')
    // Colourless, printed through console.log/error, as in a process whose output is a pipe.
    const ui = cliui({ mode: 'silent' })
    try {
      const command = await kernel.exec(name, argv, { ui })
      if (command.error && !command.exitCode) command.exitCode = 1
      output.code = command.exitCode ?? 0
    } catch (error) {
      // What `node ace` prints for a command that throws: its message on stderr, exit 1.
      ui.logger.error(error instanceof Error ? error.message : String(error))
      output.code = 1
    } finally {
      output.open = false
    }
  })
  const { stdout, stderr } = output
  return { code: output.code ?? 1, stdout, stderr, output: stdout + stderr }
}

/** Runs a real `node ace <command>` process, as an operator would type it. */
export async function aceProcess(...args: string[]): Promise<AceResult> {
  const result = await exec(process.execPath, ['ace.js', ...args], {
    cwd: app.appRoot.pathname,
    env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'silent' },
  }).catch((error) => error)
  const stdout = String(result.stdout ?? '')
  const stderr = String(result.stderr ?? '')
  return { code: result.code ?? 0, stdout, stderr, output: stdout + stderr }
}

/** The last line of a `--json` command's output, parsed. */
export function lastJsonLine(output: string) {
  return JSON.parse(output.trim().split('\n').pop()!)
}

interface Captured {
  stdout: string
  stderr: string
  code?: number
  /** False once the command has ended: what a promise it left behind prints is not its output. */
  open: boolean
}

const captured = new AsyncLocalStorage<Captured>()
let consoleCaptured = false

/**
 * console.log and console.error write to the running command's buffers when
 * called from inside `ace()` (the async context says which call), and to the
 * terminal otherwise.
 */
function captureConsole() {
  if (consoleCaptured) return
  consoleCaptured = true
  const streams = { log: 'stdout', info: 'stdout', error: 'stderr', warn: 'stderr' } as const
  for (const [method, stream] of Object.entries(streams) as [
    keyof typeof streams,
    'stdout' | 'stderr',
  ][]) {
    const original = console[method].bind(console)
    console[method] = (...values: unknown[]) => {
      const into = captured.getStore()
      if (!into?.open) return original(...values)
      into[stream] += format(...values) + '\n'
    }
  }
}
