import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { BlockList, isIP, type LookupFunction } from 'node:net'

/**
 * Addresses a merchant's notify_url must not reach: the gateway's own host,
 * its private network, cloud metadata (169.254.169.254) and similar. IPv4-mapped
 * IPv6 addresses (::ffff:10.0.0.1) are checked against the IPv4 rules by
 * BlockList itself.
 */
const forbidden = new BlockList()
for (const [network, prefix] of [
  ['0.0.0.0', 8], // unspecified, "this network"
  ['10.0.0.0', 8], // RFC 1918
  ['100.64.0.0', 10], // CGNAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata)
  ['172.16.0.0', 12], // RFC 1918
  ['192.168.0.0', 16], // RFC 1918
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  forbidden.addSubnet(network, prefix, 'ipv4')
}
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  forbidden.addSubnet(network, prefix, 'ipv6')
}

export const PRIVATE_TARGET_ERROR = 'target resolves to a private address'

/** Raised when the target is refused: retrying cannot help. */
export class ForbiddenTargetError extends Error {
  readonly code = 'E_CALLBACK_FORBIDDEN_TARGET'
  constructor(
    readonly host: string,
    readonly address: string
  ) {
    super(`${PRIVATE_TARGET_ERROR} (${host} → ${address})`)
  }
}

export function isForbiddenAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 0) return true // not an address at all: refuse rather than guess
  return forbidden.check(address, family === 4 ? 'ipv4' : 'ipv6')
}

/** URL hostnames keep IPv6 literals in brackets. */
export function hostnameOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1')
}

/**
 * Throws ForbiddenTargetError when the URL's host is an IP literal in a
 * forbidden range. Needed because Node connects to a literal without calling
 * the `lookup` function at all.
 */
export function assertLiteralAllowed(url: URL) {
  const host = hostnameOf(url)
  if (isIP(host) && isForbiddenAddress(host)) throw new ForbiddenTargetError(host, host)
}

/**
 * A `lookup` for http(s).request / net.connect that resolves the name and
 * refuses the connection when any address it resolves to is forbidden. The
 * socket can only connect to addresses returned here, so the check applies to
 * the address actually connected to: a DNS answer that changes between a
 * pre-check and the connection (rebinding) gains nothing.
 */
export function guardedLookup(onResolved?: (addresses: LookupAddress[]) => void): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0)
      const list = addresses as LookupAddress[]
      const refused = list.find((entry) => isForbiddenAddress(entry.address))
      if (refused) {
        return callback(new ForbiddenTargetError(hostname, refused.address), '', 0)
      }
      onResolved?.(list)
      if (options.all) return (callback as any)(null, list)
      return callback(null, list[0].address, list[0].family)
    })
  }
}
