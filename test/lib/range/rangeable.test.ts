import t from 'tap'
import { rangeable, type RangeField } from '../../../lib/range/rangeable.js'
import type { RangeOrder } from '../../../lib/range/grammar.js'
import { assertError, buildPlugins, json } from '../../helpers/index.js'

interface Thing { label: string, weight: number }
const THINGS: Thing[] = [
  { label: 'Dark Z', weight: 3 },
  { label: '#1', weight: -0 },
  { label: 'é', weight: 3 },
  { label: 'Tan;x', weight: 10 },
  { label: 'a..b', weight: 3 }
]
const THING_FIELDS: Record<string, RangeField<Thing>> = {
  label: { type: 'string', value: (thing) => thing.label },
  weight: { type: 'integer', value: (thing) => thing.weight, limit: 2, order: 'asc' }
}

t.test('rangeable: a collection declared once, with defaults per collection and per field', async (t) => {
  const things = rangeable(THINGS, THING_FIELDS, { limit: 3 })
  t.equal(things.size, 5)
  t.same(things.fields, ['label', 'weight'])
  t.same(things.select(undefined).items.map((thing) => thing.label), ['é', 'a..b', 'Tan;x'], 'no header: the first field, the collection\'s limit 3, desc')
  t.same(things.select('weight').items.map((thing) => thing.label), ['#1', 'Dark Z'], 'the field\'s own limit 2 and order asc')
  t.ok(Object.is(things.select('weight').first, 0), '-0 is read as 0')
  t.same(things.select('label; limit 1; order asc').items.map((thing) => thing.label), ['#1'])
  t.throws(() => things.select('colour'), { statusCode: 400, message: /the fields are label, weight/ })

  const byWeight = rangeable(THINGS, THING_FIELDS, { defaultField: 'weight', order: 'desc' })
  t.same(byWeight.select(undefined).items.map((thing) => thing.weight), [0, 3], 'defaultField; the field\'s order wins over the collection\'s')
  t.same(rangeable([], THING_FIELDS).select('label').items, [], 'an empty collection')
  t.same(rangeable(THINGS, { label: { ...THING_FIELDS.label!, limit: undefined } }, { limit: undefined }).select('label').items.length, 5,
    'an option set to undefined is not given: limit 100')
  t.same(rangeable(THINGS, { label: THING_FIELDS.label! }).select('label; limit 2').items.map((thing) => thing.label), ['é', 'a..b'],
    'nothing set: order desc')
  t.same(rangeable(THINGS, THING_FIELDS, { limit: 0 }).select('label').items, [], 'a limit of 0 is a limit')

  const mutable = [...THINGS]
  const copied = rangeable(mutable, THING_FIELDS)
  mutable.reverse().pop()
  t.same(copied.select('label; order asc; limit 1').items.map((thing) => thing.label), ['#1'], 'the collection is copied at registration')
  t.equal(copied.size, 5)
})

t.test('rangeable: a declaration that cannot work is refused at registration', async (t) => {
  const label = THING_FIELDS.label!
  const cases: Array<[string, () => unknown, RegExp]> = [
    ['no fields', () => rangeable(THINGS, {}), /the default field undefined is not one of the fields/],
    ['unknown default field', () => rangeable(THINGS, THING_FIELDS, { defaultField: 'size' }), /default field size is not one of the fields: label, weight$/],
    ['a name with a space', () => rangeable(THINGS, { 'a b': label }), /must be one token/],
    ['a name with ;', () => rangeable(THINGS, { 'a;b': label }), /must be one token/],
    ['a name with ,', () => rangeable(THINGS, { 'a,b': label }), /must be one token/],
    ['an empty name', () => rangeable(THINGS, { '': label }), /must be one token/],
    ['a negative limit', () => rangeable(THINGS, THING_FIELDS, { limit: -1 }), /rangeable: limit must be a non-negative safe integer/],
    ['a fractional offset', () => rangeable(THINGS, { label: { ...label, offset: 1.5 } }), /field label: offset/],
    ['an unknown order', () => rangeable(THINGS, THING_FIELDS, { order: 'up' as RangeOrder }), /order must be asc or desc/],
    ['a string field with a number', () => rangeable(THINGS, { w: { type: 'string', value: (thing) => thing.weight as unknown as string } }), /field w: item 0 has 3, not a string/],
    ['an integer field with a fraction', () => rangeable([{ w: 1.5 }], { w: { type: 'integer', value: (item) => item.w } }), /item 0 has 1.5, not a safe integer/],
    ['an integer field with a string', () => rangeable([{ w: '1' }], { w: { type: 'integer', value: (item) => item.w as unknown as number } }), /not a safe integer/],
    ['an integer field with an unsafe integer', () => rangeable([{ w: 2 ** 60 }], { w: { type: 'integer', value: (item) => item.w } }), /not a safe integer/]
  ]
  for (const [label, declare, message] of cases) t.throws(declare, { name: 'TypeError', message }, label)
})

t.test('a route of its own over a rangeable collection: headers percent-encoded, Next-Range followed over HTTP', async (t) => {
  const app = await buildPlugins(t, (server) => {
    const things = rangeable(THINGS, THING_FIELDS)
    server.get('/things', async (request, reply) => {
      reply.code(206).header('total-count', things.size)
      return things.page(request, reply)
    })
  })

  let res = await app.inject({ url: '/things', headers: { range: 'label; limit 2; order asc' } })
  t.equal(res.statusCode, 206)
  t.equal(res.headers['accept-ranges'], 'label,weight')
  t.equal(res.headers['total-count'], '5')
  t.equal(res.headers['content-range'], 'label %231..Dark%20Z')
  t.equal(res.headers['next-range'], 'label Dark%20Z;limit 2;offset 1;order asc')

  const seen: string[] = []
  let range: string | undefined = 'label; limit 1; order asc'
  while (range !== undefined) {
    res = await app.inject({ url: '/things', headers: { range } })
    seen.push(...json<Thing[]>(res).map((thing) => thing.label))
    range = res.headers['next-range'] as string | undefined
  }
  t.same(seen, ['#1', 'Dark Z', 'Tan;x', 'a..b', 'é'], 'every item once, in code-unit order')

  res = await app.inject({ url: '/things', headers: { range: 'label Tan%3Bx; limit 5' } })
  t.equal(res.headers['content-range'], 'label Tan%3Bx..%231')
  t.equal(res.headers['next-range'], undefined, 'shorter than the limit')
  res = await app.inject({ url: '/things', headers: { range: 'weight 3' } })
  t.equal(res.headers['content-range'], 'weight 3..3')
  t.equal(res.headers['next-range'], 'weight 3;limit 2;offset 2;order asc')
  res = await app.inject({ url: '/things', headers: { range: 'label; offset 10' } })
  t.same(json(res), [], 'past the end: an empty page')
  t.equal(res.headers['content-range'], undefined, 'an empty page has no range of values')

  res = await app.inject({ url: '/things', headers: { range: 'label; order sideways' } })
  assertError(t, res, 400, /^Invalid Range Order/)
  t.equal(res.headers['accept-ranges'], 'label,weight', 'a 400 still says which fields are rangeable')
  t.equal(res.headers['content-range'], undefined)
})
