import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

/**
 * One memory-reducing collection once a web process has booted and listens.
 * Booting grows V8's heap to about 45 MB of pages for under 30 MB that stay
 * alive (compiled modules, config, route tables), and V8 keeps those pages
 * until its memory reducer runs, which an idle process may wait long for. A
 * compacting collection that hands the free pages back takes a process at
 * rest from about 138 to 117 MiB, and to 134-137 MiB once it has answered
 * its first health check (docs/performance.md); it runs once, in well under
 * 100 ms, before the process has served anything.
 *
 * The collector is reached through a flag set for this one call: the process
 * keeps no global gc() for other code to call.
 */
export function releaseBootMemory() {
  let gc = (globalThis as { gc?: Collector }).gc
  if (!gc) {
    setFlagsFromString('--expose-gc')
    gc = runInNewContext('gc') as Collector
    setFlagsFromString('--no-expose-gc')
  }
  // 'last-resort': V8's full collection that also compacts and releases the
  // freed pages (a regular one frees the objects but keeps most pages).
  gc({ type: 'major', execution: 'sync', flavor: 'last-resort' })
}

type Collector = (options?: { type: string; execution: string; flavor: string }) => void
