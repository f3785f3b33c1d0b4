import { PerformanceObserver } from 'node:perf_hooks'
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8'
import { releaseBootMemory } from '#core/boot_memory'

/**
 * The heap of a process that imports one statement file and exits
 * (`statements:import`), bounded without node flags: an operator runs
 * `node ace statements:import` as it is, and gets this.
 *
 * An import allocates some 15 KiB per line, nearly all of it garbage
 * within a batch or two. Left to V8's defaults on a host with gigabytes of
 * memory, a 100,000-line import grows the young generation to its largest
 * (two semi-spaces of 64 MiB) and lets the batches it promotes pile up in
 * the old one: about 330 MiB of RSS for some 60 MiB of live heap. Here the
 * boot's garbage is collected first and the young generation shrunk
 * (releaseBootMemory: about 130 MiB left), the young generation may then
 * grow to `youngMiB` only (V8 reads its growth factor at each growth: it
 * is set to 1 once that size is reached), and the old generation is
 * collected once it has grown `oldGrowthPercent` over what the last
 * collection kept (V8 reads that at each collection too). Process-wide,
 * for the rest of the process: never for the web process or the worker,
 * whose heap bounds are node flags (bin/heap_flags.sh).
 */
export function boundImportMemory(options: { youngMiB?: number; oldGrowthPercent?: number } = {}) {
  const youngBytes = (options.youngMiB ?? 16) * 1024 * 1024
  releaseBootMemory()
  setFlagsFromString(`--heap-growing-percent=${options.oldGrowthPercent ?? 35}`)
  const young = () =>
    getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0
  if (young() >= youngBytes) {
    setFlagsFromString('--semi-space-growth-factor=1')
    return
  }
  // Asked after collections (a growth happens at one) until the size is reached;
  // an observer keeps no process alive.
  const observer = new PerformanceObserver(() => {
    if (young() < youngBytes) return
    setFlagsFromString('--semi-space-growth-factor=1')
    observer.disconnect()
  })
  observer.observe({ entryTypes: ['gc'] })
}
