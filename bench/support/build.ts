/*
| The compiled gateway for benchmarks: `node ace build` runs when build/ is
| missing or older than the sources (BENCH_BUILD=0 uses build/ as it is;
| BENCH_BUILD_FLAGS passes flags to it, e.g. --ignore-ts-errors).
*/
import { spawnSync } from 'node:child_process'
import { readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = fileURLToPath(new URL('../../', import.meta.url))
export const BUILD = join(ROOT, 'build')

const SOURCES = [
  'app',
  'bin',
  'commands',
  'config',
  'database',
  'providers',
  'resources',
  'start',
  'adonisrc.ts',
  'package.json',
  'tsconfig.json',
]

/** Builds when build/ is missing or a source file is newer than it (unless BENCH_BUILD=0). */
export async function ensureBuild() {
  const built = await stat(join(BUILD, 'bin/server.js')).catch(() => undefined)
  if (built && process.env.BENCH_BUILD === '0') {
    console.log('BENCH_BUILD=0: build/ is used as it is')
    return
  }
  let newest = 0
  for (const source of SOURCES) newest = Math.max(newest, await newestMtime(join(ROOT, source)))
  if (built && built.mtimeMs >= newest) return
  console.log(
    built ? 'build/ is older than the sources: node ace build' : 'no build/: node ace build'
  )
  const flags = (process.env.BENCH_BUILD_FLAGS ?? '').split(' ').filter(Boolean)
  const result = spawnSync(process.execPath, ['ace.js', 'build', ...flags], {
    cwd: ROOT,
    stdio: 'inherit',
  })
  if (result.status !== 0) throw new Error('node ace build failed')
}

async function newestMtime(path: string): Promise<number> {
  const info = await stat(path).catch(() => undefined)
  if (!info) return 0
  if (!info.isDirectory()) return info.mtimeMs
  let newest = info.mtimeMs
  for (const entry of await readdir(path)) {
    newest = Math.max(newest, await newestMtime(join(path, entry)))
  }
  return newest
}
