import t from 'tap'
import { build } from '../../helpers/index.js'

/** The directives of a Content-Security-Policy header, by name. */
const directives = (header: unknown) => new Map(String(header).split(';').map((directive) => {
  const [name = '', ...values] = directive.trim().split(/\s+/)
  return [name, values.join(' ')]
}))

t.test('security headers on every response, errors included: the API set, and helmet\'s on pages', async (t) => {
  const app = await build(t, { DOCS_CATCH_ALL: 'false' })
  for (const url of ['/hello', '/no-such-path', '/users/list-all', '/userStream?count=1', '/docs']) {
    const res = await app.inject({ url })
    t.equal(res.headers['x-content-type-options'], 'nosniff', `${url}: nosniff`)
    t.equal(res.headers['x-frame-options'], 'DENY', `${url}: never framed`)
    t.equal(res.headers['referrer-policy'], 'no-referrer')
    t.equal(res.headers['strict-transport-security'], 'max-age=31536000; includeSubDomains')
    t.equal(res.headers['content-security-policy'], "default-src 'none'; frame-ancestors 'none'", `${url}: nothing loads, nothing frames`)
    t.notOk(res.headers['cross-origin-opener-policy'], `${url}: no page policies on an API answer`)
  }
  for (const request of [{ url: '/documentation' }, { url: '/persons', headers: { accept: 'text/html' } }]) {
    const res = await app.inject(request)
    t.match(res.headers['content-type'], /^text\/html/)
    t.equal(res.headers['x-content-type-options'], 'nosniff', `${request.url} (HTML): nosniff`)
    t.equal(res.headers['x-frame-options'], 'SAMEORIGIN', `${request.url} (HTML): no framing by others`)
    t.equal(res.headers['cross-origin-opener-policy'], 'same-origin', `${request.url} (HTML): helmet's page policies`)
    t.match(res.headers['content-security-policy'], /^default-src 'self';/)
  }
})

t.test('the Content-Security-Policy lets Swagger UI work from this origin, and nothing else in', async (t) => {
  const app = await build(t)
  const csp = directives((await app.inject({ url: '/documentation' })).headers['content-security-policy'])
  t.equal(csp.get('default-src'), "'self'", 'fetches (Try it out) to this origin only')
  t.equal(csp.get('script-src'), "'self'", 'scripts from this origin only: no inline script')
  t.equal(csp.get('script-src-attr'), "'none'")
  t.equal(csp.get('img-src'), "'self' data:", 'the logo is a data: image')
  t.equal(csp.get('style-src'), "'self' https: 'unsafe-inline'", 'Swagger UI sets inline styles')
  t.equal(csp.get('object-src'), "'none'")
  t.equal(csp.get('frame-ancestors'), "'self'")
  t.notOk(csp.has('upgrade-insecure-requests'), 'the page works on a plain-HTTP address too')
})
