/*
| Runs the test suites as several Japa processes at once, each on its own
| database, Redis database and upload directory, and sums up their verdicts.
|
| Most of a test's time is spent waiting (on the database, on HTTP, on a
| worker, on a callback receiver), not on the CPU: on two cores, three
| processes finish the suite in about a third of the time of one. Spec files
| are dealt out by their last measured duration (tests/durations.json), the
| longest first, each to the process with the least work so far.
|
| Used by bin/test.ts for a whole-suite run (no --files, --tests, --groups or
| --tags filter); TEST_SHARDS=1 runs one process, as a filtered run does.
*/
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, globSync, readFileSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface ShardReport {
  tests: { title: string; file: string; ms: number }[]
  files: Record<string, number>
  passed: number
  failed: number
  skipped: number
  todo: number
  hasError: boolean
}

const FILTER_FLAGS = ['--files', '--tests', '--groups', '--tags', '--failed', '--watch']
const DEFAULT_SHARDS = 3

/**
 * Spec files that measure how a second process behaves on the real clock,
 * run alone once the other processes are done: with the machine's two cores
 * busy, its timers and socket reads come late and they measure the load.
 * keep_alive.spec.ts counts the connections clients lose over two minutes
 * of idle pauses (one lost in a scenario is allowed; three busy processes
 * beside it made two).
 */
const RUN_ALONE = ['tests/functional/keep_alive.spec.ts']

/** How many processes this run uses: 1 when the arguments pick tests. */
export function shardCount(argv: string[]) {
  if (process.env.TEST_SHARD) return 1
  const filtered = argv.some((arg) => FILTER_FLAGS.some((flag) => arg.split('=')[0] === flag))
  if (filtered) return 1
  const wanted = Number(process.env.TEST_SHARDS ?? DEFAULT_SHARDS)
  return Number.isInteger(wanted) && wanted > 1 ? wanted : 1
}

/** The spec files of the suites named in `argv` (all suites when none is). */
function specFiles(suites: { name: string; files: string[] }[], argv: string[]) {
  const named = argv.filter((arg) => !arg.startsWith('-'))
  const picked = suites.filter((suite) => named.length === 0 || named.includes(suite.name))
  return picked.flatMap((suite) => suite.files.flatMap((pattern) => globSync(pattern)).sort())
}

/** Longest first, each to the least loaded process (durations of the last measured run). */
function deal(files: string[], shards: number, durations: Record<string, number>) {
  const known = Object.values(durations).sort((a, b) => a - b)
  const guess = known.length ? known[Math.floor(known.length / 2)] : 1000
  const cost = (file: string) => durations[file] ?? guess
  const loads = Array.from({ length: shards }, () => ({ files: [] as string[], ms: 0 }))
  for (const file of [...files].sort((a, b) => cost(b) - cost(a))) {
    const lightest = loads.reduce((min, load) => (load.ms < min.ms ? load : min))
    lightest.files.push(file)
    lightest.ms += cost(file)
  }
  return loads.filter((load) => load.files.length > 0)
}

function readDurations(appRoot: string): Record<string, number> {
  const path = join(appRoot, 'tests/durations.json')
  return existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : {}
}

/** The shard's own database: gateway_test becomes gateway_2_test (names must end with _test). */
function shardDatabase(index: number) {
  const base = process.env.DB_TEST_DATABASE ?? 'gateway_test'
  return `${base.replace(/_test$/, '')}_${index}_test`
}

function prefixLines(child: ChildProcess, label: string) {
  for (const [from, to] of [
    [child.stdout!, process.stdout],
    [child.stderr!, process.stderr],
  ] as const) {
    let pending = ''
    from.setEncoding('utf8')
    from.on('data', (chunk: string) => {
      const lines = (pending + chunk).split('\n')
      pending = lines.pop()!
      for (const line of lines) to.write(`${label} ${line}\n`)
    })
    from.on('end', () => pending && to.write(`${label} ${pending}\n`))
  }
}

/**
 * Runs `script argv` once per shard and prints the whole run's slowest tests
 * and files and its verdict. Resolves with the exit code.
 */
export async function runShards(options: {
  appRoot: string
  script: string
  argv: string[]
  suites: { name: string; files: string[] }[]
  shards: number
}) {
  const startedAt = performance.now()
  const files = specFiles(options.suites, options.argv)
  const alone = files.filter((file) => RUN_ALONE.includes(file))
  const plan = deal(
    files.filter((file) => !alone.includes(file)),
    options.shards,
    readDurations(options.appRoot)
  )
  const work = await mkdtemp(join(tmpdir(), 'gateway-tests-'))
  const children: ChildProcess[] = []
  const stopAll = () =>
    children.forEach((child) => child.exitCode === null && child.kill('SIGTERM'))
  process.once('SIGTERM', stopAll)
  process.once('SIGINT', stopAll)

  console.log(
    `${files.length} spec files in ${plan.length} processes ` +
      `(TEST_SHARDS=${options.shards}; TEST_SHARDS=1 runs them in one)` +
      (alone.length ? `, then ${alone.join(', ')} alone:` : ':')
  )
  const runShard = async (load: { files: string[]; ms: number }, i: number) => {
    const index = i + 1
    const label = `[${index}]`
    const reportFile = join(work, `shard-${index}.json`)
    const storage = join(work, `storage-${index}`)
    await mkdir(storage)
    console.log(
      load.ms
        ? `${label} ${load.files.length} files, ~${Math.round(load.ms / 1000)} s measured last time`
        : `${label} ${load.files.join(', ')}, alone`
    )
    const child = spawn(
      process.execPath,
      [...process.execArgv, options.script, ...options.argv, '--files', load.files.join(',')],
      {
        cwd: options.appRoot,
        env: {
          ...process.env,
          TEST_SHARD: String(index),
          DB_TEST_DATABASE: shardDatabase(index),
          REDIS_DB: String(Number(process.env.REDIS_DB ?? 1) + i),
          DRIVE_FS_ROOT: storage,
          TEST_REPORT_FILE: reportFile,
          ...(process.stdout.isTTY ? { FORCE_COLOR: '1' } : {}),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      }
    )
    children.push(child)
    prefixLines(child, label)
    const code = await new Promise<number>((resolve) =>
      child.once('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0)))
    )
    const report: ShardReport | undefined = await readFile(reportFile, 'utf8')
      .then((text) => JSON.parse(text))
      .catch(() => undefined)
    return { index, code, report }
  }
  const results = await Promise.all(plan.map(runShard))
  if (alone.length > 0) results.push(await runShard({ files: alone, ms: 0 }, plan.length))
  await rm(work, { recursive: true, force: true })

  const reports = results.flatMap((result) => (result.report ? [result.report] : []))
  const tests = reports.flatMap((report) => report.tests)
  const durations = Object.assign({}, ...reports.map((report) => report.files))
  const sum = (key: 'passed' | 'failed' | 'skipped' | 'todo') =>
    reports.reduce((total, report) => total + report[key], 0)
  printSlowest(tests, durations, performance.now() - startedAt)
  await mkdir(join(options.appRoot, 'tmp'), { recursive: true })
  await writeFile(
    join(options.appRoot, 'tmp/test-durations.json'),
    JSON.stringify(sortedByName(durations), null, 2) + '\n'
  )

  const broken = results.filter((result) => result.code !== 0 || !result.report)
  for (const { index, code, report } of broken) {
    console.log(
      report
        ? `process [${index}] exited ${code}`
        : `process [${index}] exited ${code} before reporting its tests`
    )
  }
  const failed = sum('failed') + (broken.length && !sum('failed') ? broken.length : 0)
  const skipped = sum('skipped') + sum('todo')
  console.log(
    `\ntests: ${sum('passed')} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`
  )
  return broken.length ? 1 : 0
}

function sortedByName(durations: Record<string, number>) {
  return Object.fromEntries(
    Object.entries(durations)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([file, ms]) => [file, Math.round(ms)])
  )
}

const SLOWEST = 20

/** The slowest tests and files of a run, and its wall time. */
export function printSlowest(
  tests: ShardReport['tests'],
  files: Record<string, number>,
  totalMs: number
) {
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1).padStart(6)} s`
  const lines = [`\nThe ${SLOWEST} slowest tests:`]
  for (const test of [...tests].sort((a, b) => b.ms - a.ms).slice(0, SLOWEST)) {
    lines.push(`${seconds(test.ms)}  ${test.file} › ${test.title}`)
  }
  lines.push(`\nThe ${SLOWEST} slowest files (wall time, hooks included):`)
  for (const [file, ms] of Object.entries(files)
    .sort((a, b) => b[1] - a[1])
    .slice(0, SLOWEST)) {
    lines.push(`${seconds(ms)}  ${file}`)
  }
  const inTests = tests.reduce((total, test) => total + test.ms, 0)
  lines.push(
    `\n${tests.length} tests in ${seconds(totalMs).trim()} of wall time ` +
      `(${seconds(inTests).trim()} of test time)`
  )
  console.log(lines.join('\n'))
}
