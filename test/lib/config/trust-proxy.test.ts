import t from 'tap'
import { loadConfig } from '../../../lib/config/load.js'
import { proxyListProblem, trustProxyOption } from '../../../lib/config/trust-proxy.js'

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
    t.equal(loadConfig({ TRUST_PROXY: value }).TRUST_PROXY, value)
  }
  t.match(proxyListProblem('10.0.0.1, yes'), /\("yes" is none\)$/, 'the entry that is not an address is named')
  t.notMatch(proxyListProblem('yes') ?? '', /is none/, 'a single value is quoted once, by the message')
})

t.test('TRUST_PROXY: what is refused, and the exact message', async (t) => {
  const EXPECTED = 'expected true, false, a hop count, or addresses, CIDR ranges, loopback, linklocal or uniquelocal, separated by commas'
  const refused = [
    'yes', 'truest', 'x1', '1x', '10.0.0.0/33', '10.0.0.0/', '10.0.0.0/8/8', '10.0.0.0/x8', '10.0.0.0/8x', '1.2.3',
    'fd00::/129', 'fd00::/255.0.0.0', '::1/-1', '/8', 'loopback/8', ' '
  ]
  for (const value of refused) t.equal(proxyListProblem(value), EXPECTED, JSON.stringify(value))
  for (const value of ['10.0.0.0/32', 'fd00::/128', '10.0.0.0/0', ' 10.0.0.1 ', '10.0.0.1 , ::1']) t.equal(proxyListProblem(value), undefined, JSON.stringify(value))
  t.equal(proxyListProblem('10.0.0.1, 10.0.0.0/33'), `${EXPECTED} ("10.0.0.0/33" is none)`, 'the first entry that is none, named')
  t.equal(proxyListProblem('10.0.0.1 , x'), `${EXPECTED} ("x" is none)`, 'named without its spaces')
  const hops = trustProxyOption('12') as (address: string, hop: number) => boolean
  t.same([0, 11, 12].map((hop) => hops('10.0.0.1', hop)), [true, true, false], 'two digits')
  t.equal(trustProxyOption('1x'), '1x', 'not a hop count: a list for proxy-addr')
})
