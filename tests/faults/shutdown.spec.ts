import { join } from 'node:path'
import { readFile } from 'node:fs/promises'
import { test } from '@japa/runner'
import { heapFlags } from '../../bin/heap_flags.js'
import {
  createMerchant,
  health,
  merchantClient,
  payOrders,
  startWeb,
  startWorker,
  type TestMerchant,
} from '#tests/faults/helpers/gateway'
import { isSuccess, keepAliveAgent, MerchantClient } from '#tests/faults/helpers/client'
import { Load, type RequestKind } from '#tests/faults/helpers/load'
import {
  ManagedProcess,
  StopWaiting,
  commandLine,
  descendants,
  freePort,
  isAlive,
  sleep,
  until,
} from '#tests/faults/helpers/processes'
import { Scenario } from '#tests/faults/helpers/scenario'
import { APP_ROOT, DATABASE, TIMINGS, gatewayEnv, world } from '#tests/faults/helpers/world'

/** How long `npm start` / bin/start.sh may take to leave no process behind after a signal. */
const START_SCRIPT_STOP_MS = 12_000

test.group('f. SIGTERM under load', () => {
  test('the web process finishes in-flight requests and exits in bounded time', async ({
    assert,
  }) => {
    const s = new Scenario('f. SIGTERM to the web process, under and after keep-alive load')
    try {
      const merchant = await createMerchant('shutdown', 1_000_000_00)
      s.track(await startWorker())
      // Under load: 20 connections keep sending while the signal arrives.
      await sigtermWeb(s, merchant, 'under load', async (load) => {
        load.start()
        await sleep(5000)
        return async () => load.stop()
      })
      // Under load from clients that open a connection per request (no keep-alive):
      // some connections are still queued by the kernel or in their TLS handshake.
      await sigtermWeb(
        s,
        merchant,
        'connection per request',
        async (load) => {
          load.start()
          await sleep(3000)
          return async () => load.stop()
        },
        // Mostly balance reads, back to back: many connections opened per second.
        { keepAlive: false, mix: ['balance', 'balance', 'withdraw', 'balance'], pauseMs: 0 }
      )
      // After load: 300 requests, then the signal with the idle keep-alive connections still open.
      await sigtermWeb(s, merchant, 'after load', async (load) => {
        await load.runCount(300)
        return async () => {}
      })
      // Redis stops answering (frozen, as behind a network black hole) before the signal.
      await sigtermWeb(s, merchant, 'Redis unreachable', async (load) => {
        await load.runCount(100)
        world().redis.process!.signal('SIGSTOP')
        return async () => {
          world().redis.process!.signal('SIGCONT')
        }
      })
      // Payments are paid at once, so that no order waits for its expiry.
      const paid = await payOrders(await openPayments(merchant))
      s.report.add('payments paid', paid.matched)
      await s.settle(merchant, 30_000)
    } catch (error) {
      s.failures.push(`harness: ${(error as Error).stack ?? error}`)
    } finally {
      await s.close(assert)
    }
  })

  test('npm start and bin/start.sh leave no process behind on SIGTERM, SIGINT and SIGHUP', async ({
    assert,
  }) => {
    const s = new Scenario('f. npm start / bin/start.sh stopped by a signal')
    try {
      const merchant = await createMerchant('start-script', 1_000_00)
      // One after the other: two scripts migrating one database at once trip
      // over the migration lock, which is not what this scenario is about.
      const runs: StartRun[] = [
        { label: 'bash bin/start.sh, SIGTERM', via: 'bash', signal: 'SIGTERM', target: 'process' },
        { label: 'bash bin/start.sh, SIGINT', via: 'bash', signal: 'SIGINT', target: 'process' },
        { label: 'bash bin/start.sh, SIGHUP', via: 'bash', signal: 'SIGHUP', target: 'process' },
        { label: 'npm start, SIGTERM to npm', via: 'npm', signal: 'SIGTERM', target: 'process' },
        { label: 'npm start, SIGHUP to npm', via: 'npm', signal: 'SIGHUP', target: 'process' },
        {
          label: 'npm start, Ctrl-C (SIGINT to the group)',
          via: 'npm',
          signal: 'SIGINT',
          target: 'group',
        },
      ]
      for (const run of runs) {
        const result = await stopStartScript(run, merchant)
        s.report.add(run.label, result.summary)
        for (const failure of result.failures) s.failures.push(`${run.label}: ${failure}`)
      }
    } catch (error) {
      s.failures.push(`harness: ${(error as Error).stack ?? error}`)
    } finally {
      await s.close(assert)
    }
  })
})

interface StartRun {
  label: string
  via: 'bash' | 'npm'
  signal: NodeJS.Signals
  /** The signal goes to the script's process only, or to its whole process group (a terminal's Ctrl-C). */
  target: 'process' | 'group'
}

/**
 * Starts `bash bin/start.sh` (or `npm start`) against the private instances,
 * waits until its web process answers and its worker runs, leaves idle
 * keep-alive connections open on the web process (a merchant's connection
 * pool), sends the signal and checks that the script and every process it
 * started are gone within START_SCRIPT_STOP_MS.
 */
async function stopStartScript(run: StartRun, merchant: TestMerchant) {
  const failures: string[] = []
  const port = await freePort()
  // npm as a developer runs it: the machine's node first on PATH; the script adds node_modules/.bin itself.
  const env = gatewayEnv({ PORT: String(port) })
  if (run.via === 'npm')
    env.PATH = (process.env.PATH ?? '')
      .split(':')
      .filter((dir) => !dir.startsWith(APP_ROOT))
      .join(':')
  const logFile = join(world().directory, `start-${run.via}-${run.signal}-${port}.log`)
  const script = new ManagedProcess(
    run.label,
    run.via === 'npm' ? 'npm' : 'bash',
    run.via === 'npm' ? ['start'] : ['bin/start.sh'],
    { cwd: APP_ROOT, env, logFile }
  )
  const agent = keepAliveAgent(5)
  let tree: number[] = []
  try {
    const url = `https://127.0.0.1:${port}`
    const started = await until(
      async () => {
        if (!script.alive) throw new StopWaiting('exited')
        if ((await health(url)).status === 0) return false
        const children = await Promise.all((await descendants(script.pid)).map(commandLine))
        return children.some((line) => line.includes('queue:work'))
      },
      120_000,
      250
    ).catch(() => false)
    if (!started) {
      failures.push(`did not start: ${(await script.tail(8)).replace(/\n/g, ' | ')}`)
      return { summary: 'did not start', failures }
    }
    // Some traffic, then idle keep-alive sockets left open on the web process.
    const client = new MerchantClient(url, merchant.credentials, world().tls.cert)
    const load = new Load(client, { concurrency: 5, mix: ['balance'], notifyUrl: '', agent })
    await load.runCount(25)
    tree = await descendants(script.pid)
    const named = await Promise.all(
      tree.map(async (pid) => ({ pid, line: await commandLine(pid) }))
    )
    const gateway = named.filter(
      ({ line }) => line.includes('bin/server.ts') || line.includes('queue:work')
    )
    // Both run with production's heap bounds (docs/operations.md, "Memory").
    for (const [part, flags] of [
      ['bin/server.ts', heapFlags('WEB_HEAP_FLAGS')],
      ['queue:work', heapFlags('WORKER_HEAP_FLAGS')],
    ] as const) {
      const child = named.find(({ line }) => line.includes(part))
      const words = child?.line.split(' ') ?? []
      for (const flag of flags) {
        if (!words.includes(flag)) failures.push(`${part} started without ${flag}`)
      }
    }

    const signalledAt = Date.now()
    if (run.target === 'group') script.signalGroup(run.signal)
    else script.signal(run.signal)
    let scriptExitMs: number | undefined
    let allGoneMs: number | undefined
    await until(
      async () => {
        if (scriptExitMs === undefined && !script.alive) scriptExitMs = Date.now() - signalledAt
        const alive = await Promise.all(tree.map(isAlive))
        if (allGoneMs === undefined && !alive.some(Boolean)) allGoneMs = Date.now() - signalledAt
        return scriptExitMs !== undefined && allGoneMs !== undefined
      },
      START_SCRIPT_STOP_MS + 1000,
      100
    )
    const left = []
    for (const { pid, line } of named)
      if (await isAlive(pid)) left.push(`${pid} ${line.slice(0, 60)}`)
    const output = await readFile(logFile, 'utf8').catch(() => '')
    const forced = output.includes('killing')

    if (scriptExitMs === undefined)
      failures.push(
        `the ${run.via} process still runs ${START_SCRIPT_STOP_MS / 1000} s after ${run.signal}`
      )
    if (allGoneMs === undefined || allGoneMs > START_SCRIPT_STOP_MS) {
      failures.push(
        `processes left ${START_SCRIPT_STOP_MS / 1000} s after ${run.signal}: ${left.join('; ') || 'none'}`
      )
    }
    if (gateway.length < 2)
      failures.push(
        `harness: web and worker not both found (${named.map(({ line }) => line.slice(0, 40)).join('; ')})`
      )
    const summary = [
      `${load.samples.filter(isSuccess).length}/25 requests ok`,
      `${run.via} exited ${scriptExitMs === undefined ? 'never' : `after ${(scriptExitMs / 1000).toFixed(1)} s`}`,
      `all ${tree.length} processes gone ${allGoneMs === undefined ? 'never' : `after ${(allGoneMs / 1000).toFixed(1)} s`}`,
      forced ? 'children SIGKILLed by the script after 10 s' : 'children stopped by themselves',
      left.length > 0 ? `left: ${left.join('; ')}` : '',
    ]
    return { summary: summary.filter(Boolean).join(', '), failures }
  } finally {
    agent.destroy()
    await script.kill()
    // Whatever the script left behind: its process group is gone, a process
    // that left the group was listed above.
    for (const pid of tree) {
      try {
        if (await isAlive(pid)) process.kill(pid, 'SIGKILL')
      } catch {}
    }
  }
}

/**
 * One web process on 20 keep-alive connections (`drive` starts the load and
 * returns how to stop it), SIGTERM, and what the clients saw: answers before
 * and in flight at the signal are whole, the process exits within
 * SHUTDOWN_TIMEOUT_MS + 2 s.
 */
async function sigtermWeb(
  s: Scenario,
  merchant: TestMerchant,
  label: string,
  drive: (load: Load) => Promise<() => Promise<void>>,
  options: { keepAlive: boolean; mix?: RequestKind[]; pauseMs?: number } = { keepAlive: true }
) {
  const agent = options.keepAlive ? keepAliveAgent(20) : undefined
  try {
    const web = await startWeb(`web-${label.replace(/ /g, '-')}`)
    s.track(web.process)
    const load = new Load(merchantClient(merchant, web), {
      concurrency: 20,
      mix: options.mix ?? ['withdraw', 'balance', 'payment', 'withdraw', 'balance'],
      notifyUrl: world().receiver.url,
      agent,
      timeoutMs: 20_000,
      pauseMs: options.pauseMs ?? 20,
    })
    const stopLoad = await drive(load)
    const sigtermAt = Date.now()
    web.process.signal('SIGTERM')
    const bound = TIMINGS.SHUTDOWN_TIMEOUT_MS + 2000
    const exit = await web.process.waitExit(bound).finally(stopLoad)
    const exitMs = Date.now() - sigtermAt
    if (!exit) await web.process.kill()

    const before = load.samples.filter((sample) => sample.startedAt + sample.ms < sigtermAt)
    const inFlight = load.samples.filter(
      (sample) => sample.startedAt < sigtermAt && sample.startedAt + sample.ms >= sigtermAt
    )
    const afterSignal = load.samples.filter((sample) => sample.startedAt >= sigtermAt)
    s.report.addLatency(`${label}: before SIGTERM`, before)
    if (inFlight.length > 0) s.report.addLatency(`${label}: in flight at SIGTERM`, inFlight)
    if (afterSignal.length > 0) s.report.addLatency(`${label}: sent after SIGTERM`, afterSignal)
    s.report.add(
      `${label}: exit after SIGTERM`,
      exit
        ? `${(exitMs / 1000).toFixed(1)} s (code ${exit.code}, signal ${exit.signal})`
        : `still running after ${bound / 1000} s (SIGKILLed)`
    )
    s.expect(exit, `${label}: the web process did not exit within ${bound / 1000} s of SIGTERM`)
    s.expect(
      before.length > 0 && before.every(isSuccess),
      `${label}: requests failed before SIGTERM`
    )
    const cut = load.samples.filter((sample) => sample.truncated)
    s.expect(cut.length === 0, `${label}: ${cut.length} responses were cut off`)
    const unfinished = inFlight.filter((sample) => !isSuccess(sample))
    s.expect(
      unfinished.length === 0,
      `${label}: ${unfinished.length} of ${inFlight.length} requests in flight at SIGTERM got no complete answer (${[
        ...new Set(unfinished.map((sample) => sample.error ?? String(sample.status))),
      ].join(', ')})`
    )
  } finally {
    agent?.destroy()
  }
}

async function openPayments(merchant: TestMerchant) {
  const rows = await world().mariadb.query(
    "SELECT platform_order_id FROM payment_orders WHERE merchant_id = ? AND status = 'open'",
    [merchant.id],
    DATABASE
  )
  return rows.map((row) => String(row.platform_order_id))
}
