import assert from 'node:assert/strict'
import t, { type Test } from 'tap'
import fc from 'fast-check'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import type { Color } from '../../schemas/color.js'
import { syntheticColors } from '../../bench/synthetic-colors.js'
import colorsRoute from '../../routes/colors/index.js'
import COLORS from '../../routes/colors/colors.json' with { type: 'json' }
import { assertError, build, buildPlugins, json } from '../helpers/index.js'
import { SEED, propertyRuns } from '../helpers/property-runs.js'

const get = (app: FastifyInstance, range?: string) =>
  app.inject({ url: '/colors', headers: range === undefined ? {} : { range } })

const label = (colors: Color[]) => colors.map((color) => `${color.name}${color.hex}`)
const sum = (color: Color) => color.rgb.reduce((a, b) => a + b, 0)
const KEYS: Record<string, (color: Color) => string | number> = { name: (color) => color.name, hex: (color) => color.hex, rgb: sum }

/** The colours sorted by a field, ties in collection order. */
function sorted (field: string, order: 'asc' | 'desc'): Color[] {
  const key = KEYS[field]!
  const sign = order === 'asc' ? 1 : -1
  return COLORS.map((color, i) => ({ color, i }))
    .sort((a, b) => sign * (key(a.color) < key(b.color) ? -1 : key(a.color) > key(b.color) ? 1 : 0) || a.i - b.i)
    .map(({ color }) => color)
}

/** Asserts a 206 page of /colors and its headers; `contentRange`/`nextRange` undefined means absent. */
function assertPage (t: Test, res: LightMyRequestResponse, page: { body?: string[], length?: number, contentRange?: string, nextRange?: string }) {
  t.equal(res.statusCode, 206, 'status 206')
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
  t.equal(res.headers['accept-ranges'], 'name,hex,rgb', 'Accept-Ranges')
  t.equal(res.headers['total-count'], '59', 'Total-Count')
  t.equal(res.headers['content-range'], page.contentRange, `Content-Range ${page.contentRange}`)
  t.equal(res.headers['next-range'], page.nextRange, `Next-Range ${page.nextRange}`)
  const body = json<Color[]>(res)
  if (page.body !== undefined) t.same(label(body), page.body, 'the colours')
  if (page.length !== undefined) t.equal(body.length, page.length, `${page.length} colours`)
  return body
}

t.test('the 59 colours of the tutorial, names repeating', async (t) => {
  t.equal(COLORS.length, 59)
  t.same(COLORS[0], { name: 'Aqua', rgb: [0, 255, 255], hex: '#00ffff' })
  t.same(COLORS[58], { name: 'Yellow', rgb: [255, 255, 0], hex: '#ffff00' })
  t.equal(new Set(COLORS.map((color) => color.name)).size, 50, 'eight names repeat, Purple three times')
})

t.test('no Range header: the default range on name, limit 100, desc', async (t) => {
  const app = await build(t)
  const body = assertPage(t, await get(app), { length: 59, contentRange: 'name Yellow..Aqua', nextRange: undefined })
  t.same(body, sorted('name', 'desc'), 'every colour, names descending, ties in collection order')
  t.same(Object.keys(body[0]!), ['name', 'rgb', 'hex'], 'key order of the spec\'s table')
  assertPage(t, await get(app, 'name'), { length: 59, contentRange: 'name Yellow..Aqua' })
})

t.test('the tutorial\'s examples of a Range, with exact headers', async (t) => {
  const app = await build(t)
  assertPage(t, await get(app, 'name; limit 2'), {
    body: ['Yellow#ffff00', 'White#ffffff'],
    contentRange: 'name Yellow..White',
    nextRange: 'name White;limit 2;offset 1;order desc'
  })
  const body = assertPage(t, await get(app, 'name Green; order asc; offset 1'), {
    length: 36,
    contentRange: 'name GreenYellow..Yellow'
  })
  t.equal(sorted('name', 'asc')[22]?.name, 'Green')
  t.same(body, sorted('name', 'asc').slice(23), 'after Green, excluded by offset 1, ascending')
  t.same(label(body.slice(0, 2)), ['GreenYellow#afff00', 'Grey#808080'])
})

t.test('hex and rgb, percent-encoded values, rgb\'s default limit 5', async (t) => {
  const app = await build(t)
  const cases: Array<[string, { body: string[], contentRange: string, nextRange?: string }]> = [
    ['hex %23808080; limit 2', { body: ['Grey#808080', 'Olive#808000'], contentRange: 'hex %23808080..%23808000', nextRange: 'hex %23808000;limit 2;offset 1;order desc' }],
    ['hex #808080; limit 2', { body: ['Grey#808080', 'Olive#808000'], contentRange: 'hex %23808080..%23808000', nextRange: 'hex %23808000;limit 2;offset 1;order desc' }],
    ['hex; order asc; limit 3', { body: ['Black#000000', 'NavyBlue#00005f', 'Navy#000080'], contentRange: 'hex %23000000..%23000080', nextRange: 'hex %23000080;limit 3;offset 1;order asc' }],
    ['rgb', {
      body: ['White#ffffff', 'LightSteelBlue#afafff', 'Violet#d787ff', 'Silver#c0c0c0', 'HotPink#ff5fd7'],
      contentRange: 'rgb 765..565',
      nextRange: 'rgb 565;limit 5;offset 1;order desc'
    }],
    ['rgb 525; limit 3', { body: ['HotPink#ff5faf', 'LightCoral#ff8787', 'LightGreen#87ff87'], contentRange: 'rgb 525..525', nextRange: 'rgb 525;limit 3;offset 3;order desc' }],
    ['rgb 525;limit 3;offset 3;order desc', { body: ['LightSlateBlue#8787ff', 'MediumTurquoise#5fd7d7', 'Orchid#d75fd7'], contentRange: 'rgb 525..525', nextRange: 'rgb 525;limit 3;offset 6;order desc' }],
    ['rgb 1000; limit 1', { body: ['White#ffffff'], contentRange: 'rgb 765..765', nextRange: 'rgb 765;limit 1;offset 1;order desc' }],
    ['rgb -5; order asc; limit 1', { body: ['Black#000000'], contentRange: 'rgb 0..0', nextRange: 'rgb 0;limit 1;offset 1;order asc' }],
    ['name DarkRed; limit 3', { body: ['DarkRed#870000', 'DarkRed#5f0000', 'DarkOrange#ff8700'], contentRange: 'name DarkRed..DarkOrange', nextRange: 'name DarkOrange;limit 3;offset 1;order desc' }],
    ['name Purple; limit 2; order asc', { body: ['Purple#800080', 'Purple#8700ff'], contentRange: 'name Purple..Purple', nextRange: 'name Purple;limit 2;offset 2;order asc' }],
    ['name; offset 58', { body: ['Aqua#00ffff'], contentRange: 'name Aqua..Aqua' }]
  ]
  for (const [range, page] of cases) {
    t.test(range, async (t) => { assertPage(t, await get(app, range), page) })
  }
})

t.test('an empty page: no Content-Range, no Next-Range, still Accept-Ranges and Total-Count', async (t) => {
  const app = await build(t)
  for (const range of ['name Zzz; order asc', 'name; limit 0', 'name; offset 59', 'name; offset 9007199254740991', 'rgb -1', 'rgb 766; order asc']) {
    assertPage(t, await get(app, range), { body: [] })
  }
})

t.test('a malformed Range is a 400 JSON error naming the problem', async (t) => {
  const app = await build(t)
  const malformed: Array<[string, RegExp]> = [
    ['', /^Invalid Range: the header is empty/],
    ['foo', /^Invalid Range: unknown field "foo"; the fields are name, hex, rgb/],
    ['Name', /^Invalid Range: unknown field "Name"/],
    ['bytes=0-100', /^Invalid Range: unknown field "bytes=0-100"/],
    ['name Green Blue', /^Invalid Range: "name Green Blue" has more than a field and a value/],
    ['; limit 2', /^Invalid Range: no field before the first ";"/],
    ['name;', /^Invalid Range Options: an option is empty/],
    ['name; limit 1 2', /^Invalid Range Options: "limit 1 2" is not "<option> <arg>"/],
    ['name; limit abc', /^Invalid Range Options: limit must be a decimal integer .*, got "abc"/],
    ['name; offset 1.5', /^Invalid Range Options: offset must be a decimal integer .*, got "1.5"/],
    ['name; limit -1', /^Limit must be non-negative: the Range header has limit -1$/],
    ['name; offset -1', /^Offset must be non-negative: the Range header has offset -1$/],
    ['name; order ASC', /^Invalid Range Order: order must be asc or desc \(lower case\), got "ASC"/],
    ['rgb x', /^Invalid Range Value: the rgb value must be a decimal integer .*, got "x"/],
    ['name %E9', /^Invalid Range Value: the name value "%E9" is not valid percent-encoded UTF-8/]
  ]
  for (const [range, message] of malformed) {
    const res = await get(app, range)
    assertError(t, res, 400, message)
    t.equal(res.headers['accept-ranges'], 'name,hex,rgb', `${JSON.stringify(range)}: Accept-Ranges tells the fields`)
  }
})

t.test('HEAD, Accept and a trailing slash', async (t) => {
  const app = await build(t)
  const head = await app.inject({ method: 'HEAD', url: '/colors', headers: { range: 'name; limit 2' } })
  t.equal(head.statusCode, 206)
  t.equal(head.body, '')
  t.equal(head.headers['next-range'], 'name White;limit 2;offset 1;order desc')
  assertError(t, await app.inject({ url: '/colors', headers: { accept: 'text/html' } }), 406)
  assertPage(t, await app.inject({ url: '/colors/', headers: { range: 'name; limit 2' } }), {
    length: 2, contentRange: 'name Yellow..White', nextRange: 'name White;limit 2;offset 1;order desc'
  })
})

t.test('property 1 over HTTP: following Next-Range visits every colour once, in order', async (t) => {
  const app = await build(t)
  for (const field of ['name', 'hex', 'rgb']) {
    for (const order of ['asc', 'desc'] as const) {
      for (const limit of [1, 2, 5, 59]) {
        const seen: Color[] = []
        let range: string | undefined = `${field}; limit ${limit}; order ${order}`
        let pages = 0
        while (range !== undefined && pages++ < 70) {
          const res = await get(app, range)
          t.equal(res.statusCode, 206)
          seen.push(...json<Color[]>(res))
          range = res.headers['next-range'] as string | undefined
        }
        t.same(label(seen), label(sorted(field, order)), `${field} ${order} limit ${limit}: ${pages} pages`)
      }
    }
  }
})

/** What Node lets through in a header value: tab, printable ASCII, and the bytes 0x80–0xff as latin1. */
const headerChar = fc.oneof(
  fc.constantFrom('\t'),
  fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)),
  fc.integer({ min: 0x80, max: 0xff }).map((code) => String.fromCharCode(code))
)
/** Pieces of the grammar, so that many strings get past the first checks. */
const grammarPiece = fc.constantFrom('name', 'hex', 'rgb', 'limit', 'offset', 'order', 'asc', 'desc', ';', ' ', '%', '%23', '%C3%A9', '-', '1', '0', '99999999999999999999', '..')

t.test('property 2: no Range header, however malformed, gets a 5xx', async (t) => {
  const app = await build(t)
  await fc.assert(fc.asyncProperty(
    fc.oneof(
      fc.string({ unit: headerChar, maxLength: 40 }),
      fc.array(fc.oneof(grammarPiece, fc.string({ unit: headerChar, maxLength: 3 })), { maxLength: 12 }).map((pieces) => pieces.join(''))
    ),
    async (range) => {
      const res = await get(app, range)
      assert.ok(res.statusCode === 206 || res.statusCode === 400, `${JSON.stringify(range)}: ${res.statusCode} ${res.body}`)
      assert.equal(res.headers['content-type'], 'application/json; charset=utf-8')
      const body: unknown = json(res)
      if (res.statusCode === 400) assert.match((body as { message: string }).message, /Range|Limit|Offset/)
      else assert.ok(Array.isArray(body))
    }
  ), { numRuns: propertyRuns(1000), seed: SEED })
  t.pass('fast-check found no counter-example')
})

t.test('the route given a collection (the bench\'s generated colours): same routes, same rules', async (t) => {
  const app = await buildPlugins(t, (server) => {
    server.register(colorsRoute, { prefix: '/colors', colors: syntheticColors(5000, COLORS.map((color) => color.name)) })
  })
  const res = await get(app, 'name; limit 10')
  t.equal(res.statusCode, 206)
  t.equal(res.headers['total-count'], '5000')
  const page = json<Color[]>(res)
  t.equal(page.length, 10)
  t.match(res.headers['next-range'], /^name [A-Za-z0-9]+;limit 10;offset \d+;order desc$/)

  const colors = syntheticColors(5000, COLORS.map((color) => color.name))
  t.same(syntheticColors(5000, COLORS.map((color) => color.name)), colors, 'the same colours every time')
  for (const color of colors) {
    if (!(color.rgb.length === 3 && color.rgb.every((c) => Number.isInteger(c) && c >= 0 && c <= 255) &&
      color.hex === `#${color.rgb.map((c) => c.toString(16).padStart(2, '0')).join('')}`)) {
      t.fail(`not a colour: ${JSON.stringify(color)}`)
    }
  }
  t.ok(new Set(colors.map((color) => color.name)).size < 5000, 'names repeat')
  t.ok(new Set(colors.map(sum)).size > 300, 'sums spread')
  t.same(label(page), label(colors.map((color, i) => ({ color, i }))
    .sort((a, b) => (a.color.name < b.color.name ? 1 : a.color.name > b.color.name ? -1 : 0) || a.i - b.i)
    .slice(0, 10).map(({ color }) => color)), 'the first page is the 10 largest names')
})
