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

/**
 * The client a per-address limit counts, from `request.ip`: an IPv4 address as it is (an
 * IPv4-mapped IPv6 address as its IPv4 address), an IPv6 address as its /64 network
 * (`2001:db8:0:1::/64`). One IPv6 host is usually given a whole /64: counted by address, it could
 * spread its attempts over 2^64 of them, each with a budget (and a counter) of its own.
 */
export function addressGroup (ip: string): string {
  const address = ip.replace(/%.*$/, '')
  if (!net.isIPv6(address)) return ip
  const groups = hextets(address)
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    const [high = 0, low = 0] = groups.slice(6)
    return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`
  }
  return `${groups.slice(0, 4).map((group) => group.toString(16)).join(':')}::/64`
}
