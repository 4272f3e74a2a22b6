import t from 'tap'
import { InvalidConfiguration, loadConfig as load } from '../../../lib/config/load.js'
import { MAX_TRUSTED_HOPS, SHORTEST_TRUSTED_PREFIX, proxyListProblem, trustProxyOption } from '../../../lib/config/trust-proxy.js'

t.test('TRUST_PROXY maps to Fastify\'s trustProxy', async (t) => {
  t.equal(trustProxyOption('true'), true)
  t.equal(trustProxyOption('false'), false)
  t.equal(trustProxyOption('10.0.0.0/8,127.0.0.1'), '10.0.0.0/8,127.0.0.1')
  const hops = trustProxyOption('2')
  if (typeof hops !== 'function') throw new Error('a hop count gives a function')
  t.same([0, 1, 2].map((hop) => hops('10.0.0.1', hop)), [true, true, false], 'trusts the nearest 2 hops')
})

t.test('TRUST_PROXY: addresses, ranges and proxy-addr\'s names are taken; anything else is named', async (t) => {
  for (const value of ['true', 'false', '0', '2', '10.0.0.1', '10.0.0.0/8, 192.168.1.1', 'loopback', 'linklocal,uniquelocal', 'fd00::/8', '::1', '1.2.3.4/255.0.0.0']) {
    t.equal(proxyListProblem(value), undefined, value)
    t.equal(load({ TRUST_PROXY: value }).TRUST_PROXY, value)
  }
  t.match(proxyListProblem('10.0.0.1, yes'), /\("yes" is none\)$/, 'the entry that is not an address is named')
  t.notMatch(proxyListProblem('yes') ?? '', /is none/, 'a single value is quoted once, by the message')
})

t.test('TRUST_PROXY: what is refused, and the exact message', async (t) => {
  const EXPECTED = 'expected true, false, a hop count, or addresses, CIDR ranges, loopback, linklocal or uniquelocal, separated by commas'
  const refused = [
    'yes', 'truest', 'x1', '1x', '10.0.0.0/33', '10.0.0.0/', '10.0.0.0/8/8', '10.0.0.0/x8', '10.0.0.0/8x', '1.2.3',
    'fd00::/129', 'fd00::/255.0.0.0', '::1/-1', '/8', 'loopback/8', ' ',
    // proxy-addr refuses these too, and Fastify would throw at start with no line naming the setting.
    '10.0.0.0/0', '::/0', '10.0.0.0/0.0.0.0', '10.0.0.0/255.0.255.0'
  ]
  for (const value of refused) t.equal(proxyListProblem(value), EXPECTED, JSON.stringify(value))
  for (const value of ['10.0.0.0/32', 'fd00::/128', '0.0.0.0/1', '10.0.0.0/255.255.255.255', ' 10.0.0.1 ', '10.0.0.1 , ::1']) t.equal(proxyListProblem(value), undefined, JSON.stringify(value))
  t.equal(proxyListProblem('10.0.0.1, 10.0.0.0/33'), `${EXPECTED} ("10.0.0.0/33" is none)`, 'the first entry that is none, named')
  t.equal(proxyListProblem('10.0.0.1 , x'), `${EXPECTED} ("x" is none)`, 'named without its spaces')
  const hops = trustProxyOption('12') as (address: string, hop: number) => boolean
  t.same([0, 11, 12].map((hop) => hops('10.0.0.1', hop)), [true, true, false], 'two digits')
  t.equal(trustProxyOption('1x'), '1x', 'not a hop count: a list for proxy-addr')
})

/** The lines the start is refused with in production for this TRUST_PROXY; none when it is taken. */
function refusedInProduction (value: string): readonly string[] {
  try {
    load({ NODE_ENV: 'production', STORE: 'memory', TRUST_PROXY: value })
    return []
  } catch (err) {
    if (err instanceof InvalidConfiguration) return err.problems
    throw err
  }
}

t.test('TRUST_PROXY values that trust (nearly) every client, as true would, are refused in production, a line each', async (t) => {
  t.equal(MAX_TRUSTED_HOPS, 4)
  t.equal(SHORTEST_TRUSTED_PREFIX, 8)
  const fix = 'give the number of proxies in front of the service (1 behind one nginx) or their addresses (10.0.0.0/8)'
  t.same(refusedInProduction('999'), [`env/TRUST_PROXY: 999 hops are refused in production: past the proxies in front of the service, a hop trusted is an X-Forwarded-For entry the client wrote, and no more than 4 are taken; ${fix}`])
  t.same(refusedInProduction('0.0.0.0/1,128.0.0.0/1'), [`env/TRUST_PROXY: 0.0.0.0/1 is refused in production: a range wider than /8 trusts what nearly any client writes in X-Forwarded-For; ${fix}`])
  t.same(refusedInProduction('::/1,8000::/1'), [`env/TRUST_PROXY: ::/1 is refused in production: a range wider than /8 trusts what nearly any client writes in X-Forwarded-For; ${fix}`])
  const wide = [
    '5', '0005', '10.0.0.0/7', '10.0.0.1, 172.16.0.0/4', 'fc00::/7', '2000::/3', '0.0.0.0/128.0.0.0', '10.0.0.0/254.0.0.0',
    // An IPv4 range written as IPv6: proxy-addr matches IPv4 clients against it.
    '::ffff:0:0/96', '::ffff:0.0.0.0/97', '::ffff:10.0.0.0/103', '0:0:0:0:0:ffff:0:0/100'
  ]
  for (const value of wide) t.match(refusedInProduction(value), [/^env\/TRUST_PROXY: \S+ (hops are|is) refused in production: .*; give the number of proxies/], value)
  t.match(refusedInProduction('10.0.0.1, 172.16.0.0/4'), [/^env\/TRUST_PROXY: 172\.16\.0\.0\/4 is refused/], 'the entry named, without its spaces')
  const taken = [
    '0', '1', '4', '10.0.0.0/8', '10.0.0.0/255.0.0.0', 'fd00::/8', '2001:db8::/32', '::ffff:10.0.0.0/104', '::ffff:10.0.0.1',
    // Under /96 an IPv6 range matches no IPv4 client (proxy-addr), whatever its address: an IPv6 range like any other.
    '::ffff:0:0/80', '::/8',
    // proxy-addr's names are its private ranges (uniquelocal holds fc00::/7).
    'loopback', 'linklocal', 'uniquelocal', 'loopback, 10.0.0.0/8, fd00::/8'
  ]
  for (const value of taken) t.same(refusedInProduction(value), [], value)
  for (const value of ['999', '0.0.0.0/1,128.0.0.0/1', '::/1,8000::/1']) {
    t.equal(load({ TRUST_PROXY: value }).TRUST_PROXY, value, `${value}: outside production, as true is`)
  }
})
