import { BlockList, isIP } from 'node:net'
import MerchantIpWhitelistEntry from '#merchants/models/merchant_ip_whitelist_entry'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'

/** "203.0.113.7", "2001:db8::1", "::ffff:203.0.113.7" or a CIDR block → canonical "addr/prefix". */
export function normalizeCidr(input: string): string | null {
  const [rawAddress, rawPrefix, ...rest] = input.trim().split('/')
  if (rest.length > 0 || !rawAddress) return null
  const address = unmapIpv4(rawAddress)
  const family = isIP(address)
  if (family === 0) return null
  const max = family === 4 ? 32 : 128
  const prefix = rawPrefix === undefined ? max : Number(rawPrefix)
  if (!/^\d+$/.test(String(prefix)) || prefix < 0 || prefix > max) return null
  return `${address.toLowerCase()}/${prefix}`
}

/** Node reports IPv4 peers on dual-stack sockets as ::ffff:a.b.c.d. */
export function unmapIpv4(address: string): string {
  return address.toLowerCase().startsWith('::ffff:') && isIP(address.slice(7)) === 4
    ? address.slice(7)
    : address
}

export function ipMatches(cidrs: string[], ip: string): boolean {
  return ipMatcher(cidrs)(ip)
}

/** ipMatches with the list built once, for checking many addresses against one whitelist. */
export function ipMatcher(cidrs: string[]): (ip: string) => boolean {
  const list = new BlockList()
  for (const cidr of cidrs) {
    const [network, prefix] = cidr.split('/')
    const type = isIP(network) === 6 ? 'ipv6' : 'ipv4'
    list.addSubnet(network, Number(prefix), type)
  }
  return (ip) => {
    const address = unmapIpv4(ip)
    const family = isIP(address)
    if (family === 0) return false
    return list.check(address, family === 6 ? 'ipv6' : 'ipv4')
  }
}

/** The merchant's whitelist entries ("addr/prefix"), oldest first; empty: every source IP. */
export async function whitelistFor(merchantId: number, client?: QueryClientContract) {
  const rows = await MerchantIpWhitelistEntry.query({ client })
    .where('merchant_id', merchantId)
    .orderBy('id')
  return rows.map((row) => row.cidr)
}
