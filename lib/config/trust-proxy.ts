import net from 'node:net'

/** Names proxy-addr (Fastify's trustProxy) knows for address ranges: private ones, taken as they are. */
const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal'])

/**
 * The most hops a count may trust in production: a CDN, a cloud load balancer, an ingress
 * controller and a sidecar. Past the proxies really there, each hop trusted is an entry of
 * X-Forwarded-For that the client wrote (docs/operations.md, Behind nginx).
 */
export const MAX_TRUSTED_HOPS = 4

/**
 * The shortest prefix a trusted range may have in production, in either family: 10.0.0.0/8 and
 * fd00::/8, the widest private networks, are taken; 0.0.0.0/1 (half of every address) is not.
 */
export const SHORTEST_TRUSTED_PREFIX = 8

/** IPv4 addresses written as IPv6 (::ffff:10.0.0.0/104): proxy-addr matches IPv4 clients against them from /96 on. */
const IPV4_MAPPED = new net.BlockList()
IPV4_MAPPED.addSubnet('::ffff:0:0', 96, 'ipv6')

/** An entry of a TRUST_PROXY list, as proxy-addr reads it. */
interface ProxyRange { version: number, address: string, prefix: number }

/** The prefix length of an IPv4 netmask (255.255.0.0: 16), or 0 for one that is not ones then zeros. */
function netmaskPrefix (mask: string): number {
  const bits = mask.split('.').map((octet) => Number(octet).toString(2).padStart(8, '0')).join('')
  return /^1*0*$/.test(bits) ? bits.indexOf('0') === -1 ? 32 : bits.indexOf('0') : 0
}

/**
 * An address with an optional prefix length (`10.0.0.0/8`, `fd00::/8`) or IPv4 netmask, as
 * proxy-addr takes it, or undefined: it refuses a prefix of 0 and a netmask that is not ones then
 * zeros (the start would fail in Fastify, with no line naming the setting).
 */
function parseRange (entry: string): ProxyRange | undefined {
  const [address = '', prefix, ...rest] = entry.split('/')
  const version = net.isIP(address)
  if (version === 0 || rest.length > 0) return undefined
  const longest = version === 4 ? 32 : 128
  const length = prefix === undefined
    ? longest
    : /^\d+$/.test(prefix) ? Number(prefix) : version === 4 && net.isIPv4(prefix) ? netmaskPrefix(prefix) : 0
  return length >= 1 && length <= longest ? { version, address, prefix: length } : undefined
}

/**
 * What is wrong with a TRUST_PROXY list of addresses, or undefined: each entry must be an IPv4 or
 * IPv6 address, optionally with a prefix length (`10.0.0.0/8`, `fd00::/8`) or an IPv4 netmask, or
 * one of proxy-addr's names (loopback, linklocal, uniquelocal).
 */
export function proxyListProblem (value: string): string | undefined {
  if (/^(true|false|\d+)$/.test(value)) return undefined
  for (const entry of value.split(',').map((part) => part.trim())) {
    if (PROXY_RANGE_NAMES.has(entry) || parseRange(entry) !== undefined) continue
    const which = entry === value.trim() ? '' : ` (${JSON.stringify(entry)} is none)`
    return `expected true, false, a hop count, or addresses, CIDR ranges, loopback, linklocal or uniquelocal, separated by commas${which}`
  }
  return undefined
}

/** What the fix is, in every refusal of a TRUST_PROXY that trusts any client. */
const WHAT_TO_GIVE = 'give the number of proxies in front of the service (1 behind one nginx) or their addresses (10.0.0.0/8)'

/**
 * Why production refuses a valid TRUST_PROXY, or undefined: a value that lets any client pick its
 * address in X-Forwarded-For, and with it its rate limits and failed-login counts. `true`; a hop
 * count above MAX_TRUSTED_HOPS (999 trusts every entry, as `true` does); a range with a prefix
 * shorter than SHORTEST_TRUSTED_PREFIX (0.0.0.0/1,128.0.0.0/1 is every IPv4 address). An IPv4
 * range written as IPv6 counts as IPv4. Ranges are judged one by one: the setting is the
 * operator's, and the bound is against a mistake, not against a list built to cover everything.
 */
export function trustsAnyClient (value: string): string | undefined {
  if (value === 'true') return `true is refused in production, where any client could pick its address in X-Forwarded-For: ${WHAT_TO_GIVE}`
  if (/^\d+$/.test(value)) {
    return Number(value) <= MAX_TRUSTED_HOPS
      ? undefined
      : `${value} hops are refused in production: past the proxies in front of the service, a hop trusted is an X-Forwarded-For entry the client wrote, and no more than ${MAX_TRUSTED_HOPS} are taken; ${WHAT_TO_GIVE}`
  }
  for (const entry of value.split(',').map((part) => part.trim())) {
    const range = parseRange(entry)
    if (range === undefined) continue
    const mapped = range.version === 6 && range.prefix >= 96 && IPV4_MAPPED.check(range.address, 'ipv6')
    if ((mapped ? range.prefix - 96 : range.prefix) < SHORTEST_TRUSTED_PREFIX) {
      return `${entry} is refused in production: a range wider than /${SHORTEST_TRUSTED_PREFIX} trusts what nearly any client writes in X-Forwarded-For; ${WHAT_TO_GIVE}`
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
