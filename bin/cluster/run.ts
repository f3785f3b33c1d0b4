/*
| `npm run cluster`: the production topology on this machine (three-node
| MariaDB Galera cluster behind HAProxy with one writer, Redis master +
| replica + three Sentinels, two web processes behind HAProxy, two workers),
| the demo merchant seeded, and a table of where everything is. Ctrl-C stops
| every process and removes the temporary directory (`--keep` keeps it).
*/
import { readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { APP_ROOT, startTopology } from './topology.js'

const keep = process.argv.includes('--keep')
const started = performance.now()
const stamp = () => `[${((performance.now() - started) / 1000).toFixed(1)} s]`
const topology = await startTopology({
  keep,
  log: (line) => console.log(`cluster ${stamp()} ${line}`),
})
const upSeconds = (performance.now() - started) / 1000

/**
 * demo:seed keeps the demo credentials in tmp/demo-credentials.json, the file `npm start`
 * prints them from for the developer's own database: put back whatever was there.
 */
async function seedDemoMerchant() {
  const file = join(APP_ROOT, 'tmp/demo-credentials.json')
  const previous = await readFile(file).catch(() => undefined)
  try {
    return await topology.ace(['demo:seed', '--port', String(topology.haproxy.webPort)])
  } finally {
    if (previous) await writeFile(file, previous, { mode: 0o600 })
    else await rm(file, { force: true })
  }
}
const seeded = await seedDemoMerchant()
if (seeded.code !== 0) console.error(`demo:seed failed:\n${seeded.stdout}${seeded.stderr}`)

const master = await topology.redis.currentMaster()
const rows: string[][] = [['component', 'address', 'pid', 'log']]
for (const node of topology.galera.nodes) {
  rows.push([
    `MariaDB Galera ${node.name}${node === topology.galera.nodes[0] ? ' (writer)' : ' (backup)'}`,
    `127.0.0.1:${node.port}`,
    String(node.pid ?? '-'),
    join(topology.galera.directory, node.name, 'error.log'),
  ])
}
for (const server of topology.redis.servers) {
  const role = server.port === master.port ? 'master' : 'replica'
  rows.push([
    `Redis ${role}`,
    `127.0.0.1:${server.port}`,
    String(server.pid ?? '-'),
    server.logFile,
  ])
}
for (const sentinel of topology.redis.sentinels) {
  rows.push([
    `Redis ${sentinel.name} (gw)`,
    `127.0.0.1:${sentinel.port}`,
    String(sentinel.pid ?? '-'),
    sentinel.logFile,
  ])
}
rows.push([
  'HAProxy MySQL (one writer)',
  `127.0.0.1:${topology.haproxy.sqlPort}`,
  String(topology.haproxy.pid ?? '-'),
  topology.haproxy.logFile,
])
rows.push([
  'HAProxy check agent',
  topology.haproxy.agentPorts.map((port) => `127.0.0.1:${port}`).join(','),
  String(topology.haproxy.agentPid ?? '-'),
  join(topology.directory, 'check-agent.log'),
])
rows.push(['HAProxy HTTPS (round robin)', topology.webUrl, String(topology.haproxy.pid ?? '-'), ''])
for (const web of topology.webs) {
  rows.push([
    `${web.name} (metrics :${web.metricsPort})`,
    `https://127.0.0.1:${web.port}`,
    String(web.pid ?? '-'),
    web.logFile,
  ])
}
for (const worker of topology.workers) {
  rows.push([
    `${worker.name} (metrics :${worker.metricsPort})`,
    '-',
    String(worker.pid ?? '-'),
    worker.logFile,
  ])
}
const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)))
const line = (row: string[]) => row.map((cell, i) => cell.padEnd(widths[i])).join('  ')

const exported = [
  'DB_HOST',
  'DB_PORT',
  'DB_USER',
  'DB_DATABASE',
  'REDIS_SENTINELS',
  'REDIS_MASTER_NAME',
  'REDIS_HOST',
  'REDIS_PORT',
  'REDIS_DB',
  'QUEUE_PREFIX',
]
console.log(`
Production topology up in ${upSeconds.toFixed(1)} s (files in ${topology.directory})

${rows.map(line).join('\n')}

${seeded.code === 0 ? seeded.stdout.trim() : ''}

Point Ace at it (from the repository root, in another shell):

${exported.map((name) => `export ${name}='${topology.env[name] ?? ''}'`).join('\n')}
node ace.js merchant:create --platform demo --name 'Another shop' --json

Ctrl-C stops everything${keep ? ' (the directory is kept: --keep)' : ' and removes the directory'}.`)

// Stays up until SIGINT/SIGTERM; startTopology's handlers stop everything and exit.
setInterval(() => {}, 1 << 30)
