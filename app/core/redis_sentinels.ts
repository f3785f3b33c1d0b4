export interface SentinelAddress {
  host: string
  port: number
}

/**
 * The value of REDIS_SENTINELS, "host:port,host:port,...", as ioredis takes
 * it. A bad entry stops the process at boot with the variable and the entry
 * named: a gateway that silently fell back to a single Redis would lose its
 * failover without anyone noticing. Empty (unset) means no Sentinel.
 */
export function parseSentinels(value: string | undefined): SentinelAddress[] | undefined {
  if (value === undefined || value.trim() === '') return undefined
  const sentinels = value.split(',').map((raw) => {
    const entry = raw.trim()
    // host:port, or [IPv6]:port
    const match = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(entry)
    const port = match ? Number(match[3]) : 0
    if (!match || port < 1 || port > 65535) {
      throw new Error(
        `REDIS_SENTINELS: bad entry "${entry}" (expected host:port, e.g. 10.0.0.5:26379; entries separated by commas)`
      )
    }
    return { host: match[1] ?? match[2], port }
  })
  const seen = new Set<string>()
  for (const { host, port } of sentinels) {
    const key = `${host}:${port}`
    if (seen.has(key)) throw new Error(`REDIS_SENTINELS: entry "${key}" is listed twice`)
    seen.add(key)
  }
  return sentinels
}
