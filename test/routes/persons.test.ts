import t from 'tap'
import fc from 'fast-check'
import { escapeHtml, renderPersonsTable } from '../../routes/persons/table.js'
import { assertError, build } from '../helpers/index.js'
import { SEED } from '../helpers/property-runs.js'

const PERSONS_JSON = '[{"firstName":"Isaac","lastName":"Newton"},{"firstName":"Albert","lastName":"Einstein"}]'
const TABLE = '<table><tr><th>first name</th><th>last name</th></tr><tr><td>Isaac</td><td>Newton</td></tr>' +
  '<tr><td>Albert</td><td>Einstein</td></tr></table>'

t.test('GET /persons: JSON by default', async (t) => {
  const app = await build(t)
  for (const accept of [undefined, '*/*', 'application/json', 'application/json, text/html;q=0.5']) {
    const res = await app.inject({ url: '/persons', headers: accept === undefined ? {} : { accept } })
    t.equal(res.statusCode, 200, `Accept: ${accept}`)
    t.equal(res.headers['content-type'], 'application/json; charset=utf-8', `Accept: ${accept}`)
    t.equal(res.body, PERSONS_JSON, `Accept: ${accept}`)
    t.equal(res.headers.vary, 'Accept', 'the body depends on Accept')
  }
})

t.test('GET /persons with Accept: text/html: the exact table', async (t) => {
  const app = await build(t)
  const browser = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'
  for (const accept of ['text/html', browser, 'application/json;q=0.5, text/html']) {
    const res = await app.inject({ url: '/persons', headers: { accept } })
    t.equal(res.statusCode, 200, `Accept: ${accept}`)
    t.equal(res.headers['content-type'], 'text/html; charset=utf-8', `Accept: ${accept}`)
    t.equal(res.body, TABLE, `Accept: ${accept}`)
    t.equal(res.headers.vary, 'Accept')
  }
  const head = await app.inject({ method: 'HEAD', url: '/persons', headers: { accept: 'text/html' } })
  t.equal(head.headers['content-type'], 'text/html; charset=utf-8', 'HEAD: the negotiated type')
  t.equal(head.body, '')
})

t.test('GET /persons with an Accept it cannot satisfy: 406 naming both types', async (t) => {
  const app = await build(t)
  for (const accept of ['text/plain', 'application/xml', 'text/html;q=0, application/json;q=0']) {
    const message = assertError(t, await app.inject({ url: '/persons', headers: { accept } }), 406)
    t.match(message, /application\/json, text\/html/)
  }
})

t.test('a wrong method: 405 with Allow (catch-all off)', async (t) => {
  const app = await build(t, { DOCS_CATCH_ALL: 'false' })
  const res = await app.inject({ method: 'POST', url: '/persons', payload: {} })
  assertError(t, res, 405)
  t.equal(res.headers.allow, 'GET, HEAD')
})

t.test('renderPersonsTable escapes cell text', async (t) => {
  t.equal(renderPersonsTable([]), '<table><tr><th>first name</th><th>last name</th></tr></table>', 'no persons: the header row')
  t.equal(
    renderPersonsTable([{ firstName: '<script>alert("x")</script>', lastName: 'O\'Brien & <b>Sons</b>' }]),
    '<table><tr><th>first name</th><th>last name</th></tr><tr><td>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;</td>' +
      '<td>O&#39;Brien &amp; &lt;b&gt;Sons&lt;/b&gt;</td></tr></table>'
  )
  t.equal(escapeHtml('&amp;'), '&amp;amp;', 'an entity is text, escaped again')
  t.equal(escapeHtml('plain text, é ✓'), 'plain text, é ✓')
})

t.test('property: any cell text stays inside its cell and reads back the same', async (t) => {
  const unescape = (html: string) => html.replace(/&(lt|gt|quot|#39|amp);/g, (_, name: string) =>
    ({ lt: '<', gt: '>', quot: '"', '#39': '\'', amp: '&' })[name] as string)
  // Any code point, with the characters HTML gives a meaning to drawn often.
  const char = fc.oneof(fc.constantFrom('<', '>', '&', '"', '\'', ';', '#'), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }))
  const text = fc.string({ unit: char })
  fc.assert(fc.property(text, text, (firstName, lastName) => {
    const html = renderPersonsTable([{ firstName, lastName }])
    const row = /^<table><tr><th>first name<\/th><th>last name<\/th><\/tr><tr><td>([^<>"']*)<\/td><td>([^<>"']*)<\/td><\/tr><\/table>$/.exec(html)
    return row !== null && unescape(row[1] as string) === firstName && unescape(row[2] as string) === lastName
  }), { seed: SEED })
  t.pass('fast-check found no counter-example')
})
