import t from 'tap'
import { addressGroup, networkGroup } from '../../lib/client-address.js'

t.test('an IPv4 address is its own group', async (t) => {
  t.equal(addressGroup('203.0.113.7'), '203.0.113.7')
  t.equal(addressGroup('127.0.0.1'), '127.0.0.1')
  t.not(addressGroup('203.0.113.7'), addressGroup('203.0.113.8'), 'two addresses, two groups')
})

t.test('an IPv4-mapped IPv6 address is its IPv4 address', async (t) => {
  t.equal(addressGroup('::ffff:203.0.113.7'), '203.0.113.7')
  t.equal(addressGroup('::ffff:cb00:7107'), '203.0.113.7', 'written in hex')
  t.equal(addressGroup('0:0:0:0:0:ffff:127.0.0.1'), '127.0.0.1', 'written in full')
  t.equal(addressGroup('::ffff:198.51.100.77'), '198.51.100.77', 'octets of two and three digits')
  t.equal(addressGroup('::ffff:203.0.113.7%eth0'), '203.0.113.7', 'with a zone')
})

t.test('an IPv6 address is its /64', async (t) => {
  t.equal(addressGroup('2001:db8:0:1::7'), '2001:db8:0:1::/64')
  t.equal(addressGroup('2001:db8:0:1:ffff:ffff:ffff:ffff'), '2001:db8:0:1::/64', 'the whole /64 is one group')
  t.equal(addressGroup('2001:0DB8:0000:0001:0000:0000:0000:0001'), '2001:db8:0:1::/64', 'however it is written')
  t.not(addressGroup('2001:db8:0:2::1'), addressGroup('2001:db8:0:1::1'), 'another /64, another group')
  t.equal(addressGroup('::1'), '0:0:0:0::/64', 'the loopback')
  t.equal(addressGroup('::'), '0:0:0:0::/64')
  t.equal(addressGroup('2001:db8::'), '2001:db8:0:0::/64', 'zeros at the end')
  t.equal(addressGroup('fe80::1%eth0'), 'fe80:0:0:0::/64', 'the zone is not part of it')
  t.equal(addressGroup('64:ff9b::192.0.2.1'), '64:ff9b:0:0::/64', 'an IPv4 tail that is no mapping')
  t.equal(addressGroup('1:2:3:4:5:6:7:8'), '1:2:3:4::/64')
  t.equal(addressGroup('2001:db8::1:2:3:4:5'), '2001:db8:0:1::/64', 'the zeros of `::` between groups on both sides')
})

t.test('anything else is left as it is', async (t) => {
  t.equal(addressGroup(''), '')
  t.equal(addressGroup('not an address'), 'not an address')
  t.equal(addressGroup('1:2:3'), '1:2:3')
})

t.test('the network of an IPv6 address is its /48; an IPv4 address has none', async (t) => {
  t.equal(networkGroup('2001:db8:7:1::7'), '2001:db8:7::/48')
  t.equal(networkGroup('2001:db8:7:ffff:ffff:ffff:ffff:ffff'), '2001:db8:7::/48', 'the whole /48 is one network')
  t.equal(networkGroup('2001:0DB8:0007:0001::'), '2001:db8:7::/48', 'however it is written')
  t.not(networkGroup('2001:db8:8::1'), networkGroup('2001:db8:7::1'), 'another /48, another network: the third group counts')
  t.not(networkGroup('2001:db9:7::1'), networkGroup('2001:db8:7::1'), 'and the second')
  t.equal(networkGroup('2001:db8:7:1::1'), networkGroup('2001:db8:7:2::1'), 'the fourth does not')
  t.equal(networkGroup('::1'), '0:0:0::/48', 'the loopback')
  t.equal(networkGroup('fe80::1%eth0'), 'fe80:0:0::/48', 'the zone is not part of it')
  t.equal(networkGroup('64:ff9b::192.0.2.1'), '64:ff9b:0::/48', 'an IPv4 tail that is no mapping')
  t.equal(networkGroup('2001::7:2:3:4:5:6'), '2001:0:7::/48', 'the zeros of `::` between groups on both sides')
  for (const ip of ['203.0.113.7', '::ffff:203.0.113.7', '::ffff:cb00:7107', '::ffff:203.0.113.7%eth0', '', 'not an address', '1:2:3']) t.equal(networkGroup(ip), undefined, ip)
  t.equal(networkGroup('0:0:0:0:1:ffff:cb00:7107'), '0:0:0::/48', 'not a mapping: a fifth group that is not 0')
  t.equal(networkGroup('0:0:0:0:0:fffe:cb00:7107'), '0:0:0::/48', 'nor a sixth that is not ffff')
  t.equal(addressGroup('0:0:0:0:0:fffe:cb00:7107'), '0:0:0:0::/64')
})
