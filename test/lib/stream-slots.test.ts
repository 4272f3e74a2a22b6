import t from 'tap'
import { StreamSlots } from '../../lib/stream-slots.js'

t.test('a slot per stream, up to the limit per client address; each given back once', async (t) => {
  const slots = new StreamSlots(2)
  const first = slots.take('192.0.2.1')
  const second = slots.take('192.0.2.1')
  t.equal(slots.openFrom('192.0.2.1'), 2)
  const refusal = t.throws(() => slots.take('192.0.2.1')) as { code?: string, statusCode?: number, headers?: Record<string, string> }
  t.match(refusal, { code: 'API_ERR_TOO_MANY_STREAMS', statusCode: 429, expose: true, headers: { 'retry-after': '5' } }, '429 with Retry-After')
  t.match((refusal as unknown as Error).message, /2 streamed answers open already/)
  t.equal(slots.openFrom('192.0.2.1'), 2, 'a refusal takes nothing')
  slots.take('192.0.2.2')
  t.pass('another address has slots of its own')
  first()
  first()
  t.equal(slots.openFrom('192.0.2.1'), 1, 'given back once, however often called')
  slots.take('192.0.2.1')
  second()
  t.equal(slots.openFrom('192.0.2.1'), 1)
})

t.test('an IPv6 client by its /64, an IPv4-mapped address as its IPv4 address; nothing kept for an address with none open', async (t) => {
  const slots = new StreamSlots(1)
  const release = slots.take('2001:db8:0:1::1')
  t.throws(() => slots.take('2001:db8:0:1:ffff::2'), { code: 'API_ERR_TOO_MANY_STREAMS' }, 'the same /64')
  slots.take('2001:db8:0:2::1')
  slots.take('::ffff:192.0.2.7')
  t.throws(() => slots.take('192.0.2.7'), { code: 'API_ERR_TOO_MANY_STREAMS' }, 'the same IPv4 client')
  release()
  t.equal(slots.openFrom('2001:db8:0:1::1'), 0)
  slots.take('2001:db8:0:1::9')
  t.pass('free again')
})

t.test('0: no limit', async (t) => {
  const slots = new StreamSlots(0)
  for (let i = 0; i < 1000; i++) slots.take('192.0.2.1')
  t.equal(slots.openFrom('192.0.2.1'), 0, 'nothing is even counted')
})
