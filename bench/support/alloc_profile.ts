/*
| Allocation profile of the web process during a measured run (ALLOC_PROFILE=1,
| one web process): V8's sampling heap profiler through the inspector,
| collected objects included, so that it shows what a request allocates (what
| keeps the garbage collector busy), not what stays alive. Printed per request:
| the bytes, the packages that allocate them, and the gateway's (or Lucid's)
| call sites that ask for them.
*/

export const INSPECT_PORT = 9229

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number }
  selfSize: number
  children: ProfileNode[]
}

/** An inspector session on the web process (started with --inspect=127.0.0.1:INSPECT_PORT). */
export class AllocationSampler {
  #socket: WebSocket
  #sequence = 0
  #pending = new Map<number, (message: { result?: any; error?: unknown }) => void>()

  private constructor(socket: WebSocket) {
    this.#socket = socket
    socket.addEventListener('message', (event) => {
      const message = JSON.parse(String(event.data))
      this.#pending.get(message.id)?.(message)
      this.#pending.delete(message.id)
    })
  }

  static async attach(port = INSPECT_PORT) {
    const response = await fetch(`http://127.0.0.1:${port}/json/list`)
    const [target] = (await response.json()) as Array<{ webSocketDebuggerUrl: string }>
    const socket = new WebSocket(target.webSocketDebuggerUrl)
    await new Promise((resolve, reject) => {
      socket.addEventListener('open', resolve)
      socket.addEventListener('error', reject)
    })
    const sampler = new AllocationSampler(socket)
    await sampler.#send('HeapProfiler.enable')
    return sampler
  }

  start() {
    return this.#send('HeapProfiler.startSampling', {
      samplingInterval: 8192,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    })
  }

  async stop(): Promise<ProfileNode> {
    return (await this.#send('HeapProfiler.stopSampling')).profile.head
  }

  close() {
    this.#socket.close()
  }

  #send(method: string, params: object = {}): Promise<any> {
    const id = ++this.#sequence
    return new Promise((resolve, reject) => {
      this.#pending.set(id, (message) =>
        message.error ? reject(new Error(JSON.stringify(message.error))) : resolve(message.result)
      )
      this.#socket.send(JSON.stringify({ id, method, params }))
    })
  }
}

/** `package` of a frame: a node_modules package, `app:<file>` for the gateway, else node's own. */
function packageOf(url: string) {
  const dependency = /node_modules\/((@[^/]+\/)?[^/]+)/.exec(url)
  if (dependency) return dependency[1]
  if (url.includes('/build/')) return `app:${url.split('/build/').pop()}`
  return url.split('/').pop() || '(native)'
}

/** Lines to print: KB per request, the top packages, and the gateway's sites that allocate most. */
export function summarizeAllocations(head: ProfileNode, requests: number, top = 10) {
  const byPackage = new Map<string, number>()
  const bySite = new Map<string, number>()
  let total = 0
  const add = (map: Map<string, number>, key: string, bytes: number) =>
    map.set(key, (map.get(key) ?? 0) + bytes)
  const walk = (node: ProfileNode, site: string) => {
    const pkg = packageOf(node.callFrame.url)
    // The nearest frame of the gateway or of Lucid: who asked for the bytes.
    const here =
      pkg.startsWith('app:') || pkg === '@adonisjs/lucid'
        ? `${node.callFrame.functionName || '(anonymous)'} (${pkg})`
        : site
    if (node.selfSize > 0) {
      total += node.selfSize
      add(byPackage, pkg, node.selfSize)
      add(bySite, here, node.selfSize)
    }
    for (const child of node.children) walk(child, here)
  }
  walk(head, '(framework and node)')
  const kb = (bytes: number) => `${(bytes / Math.max(1, requests) / 1024).toFixed(1)} KiB`
  const ranked = (map: Map<string, number>) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, bytes]) => `    ${kb(bytes).padStart(9)}  ${name}`)
  return [
    `  allocated per request: ${kb(total)} (sampled, collected objects included)`,
    '  by package:',
    ...ranked(byPackage),
    '  by the nearest gateway or Lucid frame:',
    ...ranked(bySite),
  ]
}
