import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import app from '@adonisjs/core/services/app'

const exec = promisify(execFile)

export interface AceResult {
  code: number
  stdout: string
  stderr: string
  output: string
}

/**
 * Runs a real `node ace <command>` process against the test database and
 * Redis, as an operator would type it; never throws on a non-zero exit.
 */
export async function ace(...args: string[]): Promise<AceResult> {
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
