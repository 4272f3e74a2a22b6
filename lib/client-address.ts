import net from 'node:net'

/** The eight 16-bit groups of a valid IPv6 address (its zone removed), an IPv4 tail included. */
function hextets (address: string): number[] {
  let text = address
  const ipv4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text)
  if (ipv4 !== null) {
    const [a, b, c, d] = ipv4.slice(1).map(Number) as [number, number, number, number]
    text = `${text.slice(0, ipv4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head = '', tail] = text.split('::')
  const left = head === '' ? [] : head.split(':')
  const right = tail === undefined || tail === '' ? [] : tail.split(':')
  const zeros = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0')
  return [...left, ...zeros, ...right].map((group) => parseInt(group, 16))
}

/** An IPv6 address as the limits see it: an IPv4-mapped one as its IPv4 address, any other as its groups; undefined for anything else. */
function parsed (ip: string): { ipv4: string } | { groups: number[] } | undefined {
  const address = ip.replace(/%.*$/, '')
  if (!net.isIPv6(address)) return undefined
  const groups = hextets(address)
  if (!groups.slice(0, 5).every((group) => group === 0) || groups[5] !== 0xffff) return { groups }
  const [high = 0, low = 0] = groups.slice(6)
  return { ipv4: `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}` }
}

/** The first `count` groups of an IPv6 address, as its prefix of `count` × 16 bits: `2001:db8:0:1::/64`. */
const prefix = (groups: number[], count: number) => `${groups.slice(0, count).map((group) => group.toString(16)).join(':')}::/${count * 16}`

/**
 * The client a per-address limit counts, from `request.ip`: an IPv4 address as it is (an
 * IPv4-mapped IPv6 address as its IPv4 address), an IPv6 address as its /64 network
 * (`2001:db8:0:1::/64`). One IPv6 host is usually given a whole /64: counted by address, it could
 * spread its attempts over 2^64 of them, each with a budget (and a counter) of its own.
 */
export function addressGroup (ip: string): string {
  const address = parsed(ip)
  if (address === undefined) return ip
  return 'ipv4' in address ? address.ipv4 : prefix(address.groups, 4)
}

/**
 * The network a client's address belongs to, for a ceiling over many client addresses: an IPv6
 * address's /48 (`2001:db8:0::/48`), what one site is given (RFC 6177) and what a tunnel broker
 * hands out for free, 65,536 /64s, each a client of its own to addressGroup. Undefined for an
 * IPv4 address (an IPv4-mapped one included): IPv4 addresses are scarce, each is a ceiling of its
 * own, and a /24 is often many unrelated clients (a cloud's, a carrier's).
 */
export function networkGroup (ip: string): string | undefined {
  const address = parsed(ip)
  return address === undefined || 'ipv4' in address ? undefined : prefix(address.groups, 3)
}
