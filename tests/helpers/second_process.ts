import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, writeFile } from 'node:fs/promises'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import app from '@adonisjs/core/services/app'
import { testServers } from '#tests/helpers/servers'
import { rawRequest } from '#tests/helpers/http'

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  await new Promise((resolve) => server.close(resolve))
  return port
}

export interface SecondGatewayOptions {
  /** Environment overrides (NODE_ENV, LOG_LEVEL, DB_PORT, ...). */
  env?: Record<string, string>
  /**
   * Ready when /health answers at all, not only 200: for a process started
   * with a dependency down on purpose.
   */
  anyHealthAnswer?: boolean
}

export interface SecondGateway {
  url: string
  /** Everything the process wrote on stdout so far (its log lines, as JSON). */
  output: () => string
  stop: () => Promise<void>
}

/**
 * Starts a second, independent gateway web process (bin/server.ts) on the
 * same test database and Redis, so that invariants are proven across
 * processes and not only across requests of one process.
 */
export async function startSecondGateway(
  options: SecondGatewayOptions = {}
): Promise<SecondGateway> {
  const dir = await mkdtemp(join(tmpdir(), 'gateway-test-'))
  await writeFile(join(dir, 'cert.pem'), testServers.certificate)
  await writeFile(join(dir, 'key.pem'), testServers.key)
  // A free port can be taken by another test process between the probe and
  // the listen: a process that exits on EADDRINUSE is started again elsewhere.
  for (let attempt = 1; ; attempt++) {
    const started = await startOn(dir, await freePort(), options)
    if (started.ok) return started.gateway
    if (!started.addressInUse || attempt === 3) throw new Error(started.reason)
  }
}

type Start =
  { ok: true; gateway: SecondGateway } | { ok: false; addressInUse: boolean; reason: string }

async function startOn(dir: string, port: number, options: SecondGatewayOptions): Promise<Start> {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', '@poppinss/ts-exec', 'bin/server.ts'],
    {
      cwd: app.appRoot.pathname,
      env: {
        ...process.env,
        NODE_ENV: 'test',
        HOST: '127.0.0.1',
        PORT: String(port),
        TLS_CERT_PATH: join(dir, 'cert.pem'),
        TLS_KEY_PATH: join(dir, 'key.pem'),
        LOG_LEVEL: 'silent',
        ...options.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    }
  )
  let output = ''
  let errors = ''
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => {
    errors += chunk
    process.stderr.write(chunk)
  })
  const url = `https://127.0.0.1:${port}`
  // A cold process compiles the application first; beside other test
  // processes on two cores that has taken over 30 s.
  const startedAt = Date.now()
  const deadline = startedAt + 45_000
  for (;;) {
    try {
      const health = await rawRequest('/health', { method: 'GET', baseUrl: url })
      if (health.status === 200 || options.anyHealthAnswer) break
    } catch {}
    if (Date.now() > deadline || child.exitCode !== null) {
      const exited = child.exitCode !== null
      child.kill('SIGKILL')
      const seconds = ((Date.now() - startedAt) / 1000).toFixed(1)
      return {
        ok: false,
        addressInUse: exited && errors.includes('EADDRINUSE'),
        reason: exited
          ? `second gateway process exited with ${child.exitCode} after ${seconds} s: ${errors.slice(-500)}`
          : `second gateway process did not answer /health within ${seconds} s`,
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  return {
    ok: true,
    gateway: {
      url,
      output: () => output,
      stop: async () => {
        if (child.exitCode !== null) return
        child.kill('SIGTERM')
        await new Promise((resolve) => child.once('exit', resolve))
      },
    },
  }
}
