import { readFileSync } from 'node:fs'

/**
 * The node flags bin/heap_flags.sh gives the web process or the worker (the
 * one place they are written; bin/start.sh sources that file).
 */
export function heapFlags(name: 'WEB_HEAP_FLAGS' | 'WORKER_HEAP_FLAGS'): string[] {
  const file = readFileSync(new URL('./heap_flags.sh', import.meta.url), 'utf8')
  const value = new RegExp(`^${name}="([^"]*)"$`, 'm').exec(file)?.[1]
  if (value === undefined) throw new Error(`bin/heap_flags.sh does not set ${name}`)
  return value.split(' ').filter(Boolean)
}
