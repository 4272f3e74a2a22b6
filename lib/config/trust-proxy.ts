import net from 'node:net'

/** Names proxy-addr (Fastify's trustProxy) knows for address ranges. */
const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal'])

/**
 * What is wrong with a TRUST_PROXY list of addresses, or undefined: each entry must be an IPv4 or
 * IPv6 address, optionally with a prefix length (`10.0.0.0/8`, `fd00::/8`) or an IPv4 netmask, or
 * one of proxy-addr's names (loopback, linklocal, uniquelocal).
 */
export function proxyListProblem (value: string): string | undefined {
  if (/^(true|false|\d+)$/.test(value)) return undefined
  for (const entry of value.split(',').map((part) => part.trim())) {
    if (PROXY_RANGE_NAMES.has(entry)) continue
    const [address = '', prefix, ...rest] = entry.split('/')
    const version = net.isIP(address)
    const longest = version === 4 ? 32 : 128
    const prefixValid = prefix === undefined ||
      (/^\d+$/.test(prefix) && Number(prefix) <= longest) ||
      (version === 4 && net.isIPv4(prefix))
    if (version === 0 || rest.length > 0 || !prefixValid) {
      const which = entry === value.trim() ? '' : ` (${JSON.stringify(entry)} is none)`
      return `expected true, false, a hop count, or addresses, CIDR ranges, loopback, linklocal or uniquelocal, separated by commas${which}`
    }
  }
  return undefined
}

/** Fastify's `trustProxy` option for a TRUST_PROXY value: all, none, the nearest N hops, or these addresses. */
export function trustProxyOption (value: string): boolean | string | ((address: string, hop: number) => boolean) {
  if (value === 'true') return true
  if (value === 'false') return false
  if (/^\d+$/.test(value)) {
    const hops = Number(value)
    return (_address, hop) => hop < hops
  }
  return value
}
