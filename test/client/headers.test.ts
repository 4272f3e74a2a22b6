import t from 'tap'
import { ApiError, decodeHeaders, isApiError, type ApiError as Failure } from '../../client/index.js'
import { decodeError, httpError, httpErrorOfText, isJson, toApiError } from '../../client/errors.js'

/** The ApiError a function throws. */
function thrown (run: () => unknown): Failure {
  try {
    run()
  } catch (err) {
    if (err instanceof ApiError) return err
    throw err
  }
  throw new Error('nothing thrown')
}

/** What a DecodeError says: its kind, its header, its message, its cause's type, its response and operation. */
function decoding (err: Failure) {
  return err.kind === 'decode'
    ? { kind: err.kind, header: err.header, message: err.message, cause: err.cause instanceof SyntaxError, operation: err.operation, status: err.response?.status }
    : { kind: err.kind }
}

// The client's pure parts without a service: headers decoded from responses as the document
// declares them, and the errors of each kind made from what a call throws.

t.test('decodeHeaders(): each declared header to its type, by the answer\'s status', async (t) => {
  const albert = new Response(null, { headers: { 'x-an-int': '1797', 'x-a-bool': 'false' } })
  t.same(decodeHeaders('GET /albert', albert), { status: 200, 'X-An-Int': 1797, 'X-A-Bool': false })
  t.same(decodeHeaders('GET /albert', new Response(null, { headers: { 'x-an-int': '-12', 'x-a-bool': 'true' } })), { status: 200, 'X-An-Int': -12, 'X-A-Bool': true })
  t.same(decodeHeaders('GET /users', new Response('[]', { headers: { 'user-count': '0', 'x-an-int': '3' } })), { status: 200, 'User-Count': 0 }, 'only the headers of that status')
  t.same(decodeHeaders('GET /users', new Response('[]', { status: 206, headers: { 'user-count': '0', 'total-count': '4', 'accept-ranges': 'id' } })), { status: 206, 'Total-Count': 4, 'Accept-Ranges': 'id' }, 'another status, other headers')
  t.same(decodeHeaders('GET /users', new Response('[]', { status: 203, headers: { 'user-count': '0' } })), { status: 203 }, 'a status that declares none: none')
  t.same(decodeHeaders('GET /users', new Response('{}', { status: 503, headers: { 'retry-after': '7' } })), { status: 503, 'Retry-After': 7 }, 'an error\'s headers too: Retry-After')
  t.same(decodeHeaders('POST /products', new Response('{}', { status: 401, headers: { 'www-authenticate': 'Bearer' } })), { status: 401, 'WWW-Authenticate': 'Bearer' }, 'WWW-Authenticate')
  t.same(decodeHeaders('GET /users/{userid}', new Response('{}', { status: 404, headers: { 'retry-after': '7' } })), { status: 404 }, 'an error status that declares none: none')
  t.strictSame(decodeHeaders('GET /isaac', new Response('{}', { headers: { 'x-an-int': '0' } })), { status: 200, 'X-An-Int': 0 }, 'an optional header absent: absent; one there: of its type')
  t.strictSame(decodeHeaders('GET /failing', new Response('Sorry dear user.', { status: 503 })), { status: 503 }, 'an operation that declares no header at all')
  t.same(decodeHeaders('GET /colors', new Response('[]', { status: 206, headers: { 'content-range': 'rgb 10..-3', 'next-range': 'hex %23ffffff;limit 2;offset 1;order asc', 'accept-ranges': 'name, hex, rgb', 'total-count': '59' } })), {
    status: 206,
    'Accept-Ranges': 'name, hex, rgb',
    'Total-Count': 59,
    'Content-Range': { field: 'rgb', first: 10, last: -3 },
    'Next-Range': { field: 'hex', value: '#ffffff', limit: 2, offset: 1, order: 'asc' }
  }, 'a page\'s Range headers, values decoded to the field\'s type')
  const bytes = { etag: '"1"', 'last-modified': 'Thu, 01 Jan 2026 00:00:00 GMT', 'cache-control': 'no-cache', 'accept-ranges': 'bytes' }
  t.same(decodeHeaders('GET /static/{path}', new Response('x', { status: 206, headers: { ...bytes, 'content-range': 'bytes 0-0/1' } })), {
    status: 206, ETag: '"1"', 'Last-Modified': 'Thu, 01 Jan 2026 00:00:00 GMT', 'Cache-Control': 'no-cache', 'Accept-Ranges': 'bytes', 'Content-Range': 'bytes 0-0/1'
  }, 'a Content-Range of bytes stays a text')
  t.same(decodeHeaders('POST /products', new Response(null, { status: 201, headers: { location: 'https://example.com/api/products/42?x=1' } })), { status: 201, Location: { url: 'https://example.com/api/products/42?x=1', id: 42 } }, 'Location: the id that ends its path')
  const valid = { 'x-an-int': '1797', 'x-a-bool': 'true' }
  for (const [name, value] of [['x-an-int', '1.5'], ['x-an-int', ''], ['x-an-int', '9007199254740993'], ['x-an-int', 'x'], ['x-a-bool', 'True'], ['x-a-bool', '1']] as const) {
    const err = thrown(() => decodeHeaders('GET /albert', new Response(null, { headers: { ...valid, [name]: value } })))
    t.match(decoding(err), { kind: 'decode', header: name === 'x-an-int' ? 'X-An-Int' : 'X-A-Bool', cause: true, operation: 'GET /albert', status: 200 }, `${name}: ${JSON.stringify(value)}`)
  }
  t.same(decodeHeaders('POST /users', new Response(null, { status: 204, headers: { location: '/users/3' } })), { status: 204, Location: { url: '/users/3', id: 3 } }, 'a relative Location')
  t.same(decodeHeaders('GET /hello', new Response('{}')), { status: 200 }, 'an operation that declares no header')
  t.same(decoding(thrown(() => decodeHeaders('GET /albert', new Response(null, { headers: { ...valid, 'x-an-int': 'abc' } })))), {
    kind: 'decode', header: 'X-An-Int', message: 'the answer could not be read: X-An-Int: "abc" is not an integer', cause: true, operation: 'GET /albert', status: 200
  }, 'a header that does not decode: an ApiError of kind decode naming it, not a SyntaxError')
  t.equal(thrown(() => decodeHeaders('GET /albert', new Response(null, { headers: { ...valid, 'x-a-bool': 'yes' } }))).message, 'the answer could not be read: X-A-Bool: "yes" is not true or false')
  t.equal(thrown(() => decodeHeaders('POST /users', new Response(null, { status: 204, headers: { location: '/users/x' } }))).message, 'the answer could not be read: Location "/users/x" does not end with an id')
  for (const location of ['/users/', '/users/x', '/users/1.5', '/users/-1', '/users/1e3', '/users/99999999999999999999']) {
    t.match(decoding(thrown(() => decodeHeaders('POST /users', new Response(null, { status: 204, headers: { location } })))), { kind: 'decode', header: 'Location' }, `Location ${location}`)
  }
})

t.test('decodeHeaders(): a header the document requires and the answer lacks is an ApiError of kind decode naming it', async (t) => {
  t.same(decoding(thrown(() => decodeHeaders('GET /albert', new Response(null, { headers: { 'x-a-bool': 'true' } })))), {
    kind: 'decode', header: 'X-An-Int', message: 'the answer could not be read: X-An-Int: required, and missing', cause: true, operation: 'GET /albert', status: 200
  }, 'X-An-Int of GET /albert')
  t.match(decoding(thrown(() => decodeHeaders('GET /albert', new Response(null, { headers: { 'x-an-int': '1' } })))), { header: 'X-A-Bool' }, 'X-A-Bool')
  t.match(decoding(thrown(() => decodeHeaders('POST /users', new Response(null, { status: 201 })))), { header: 'Location', status: 201 }, 'Location of a 201')
  t.match(decoding(thrown(() => decodeHeaders('GET /users', new Response('{}', { status: 503 })))), { header: 'Retry-After', status: 503 }, 'Retry-After of a 503')
  t.match(decoding(thrown(() => decodeHeaders('GET /users', new Response('[]', { status: 206, headers: { 'accept-ranges': 'id' } })))), { header: 'Total-Count' }, 'Total-Count of a page')
  t.same(decodeHeaders('GET /users', new Response('[]', { status: 206, headers: { 'accept-ranges': 'id', 'total-count': '0' } })), { status: 206, 'Accept-Ranges': 'id', 'Total-Count': 0 }, 'Content-Range and Next-Range are optional')
  t.same(decodeHeaders('PUT /users/{userid}', new Response(null, { status: 204 })), { status: 204 }, 'Preference-Applied is optional')
})

/** A signal that has not aborted. */
const notAborted = () => new AbortController().signal

t.test('toApiError(): the kind of whatever a call threw', async (t) => {
  const kind = (err: unknown, signals = {}) => toApiError(err, signals, 'GET /hello')
  const http = httpErrorOfText(new Response('{"message":"gone"}', { status: 404, statusText: 'Not Found', headers: { 'content-type': 'application/json' } }), '{"message":"gone"}', 'GET /users/{userid}')
  t.equal(kind(http), http, 'an ApiError as it is')
  t.same([http.kind, http.status, http.body, http.message, http.operation, http.retryAfter], ['http', 404, { message: 'gone' }, '404 Not Found: gone', 'GET /users/{userid}', undefined])
  t.equal(httpError(new Response(null, { status: 503, headers: { 'retry-after': '1' } }), null).retryAfter, 1, 'Retry-After: 1, in seconds')
  t.equal(httpError(new Response(null, { status: 429, headers: { 'retry-after': 'soon' } }), null).retryAfter, undefined, 'a Retry-After that does not read: none')
  t.ok(http instanceof Error && http instanceof ApiError && http.name === 'ApiError')
  t.ok(isApiError(http, 'GET /users/{userid}'), 'of its operation')
  t.notOk(isApiError(http, 'GET /products/{productid}'), 'not of another')
  t.notOk(isApiError(httpError(new Response(null, { status: 418 }), 'tea', 'GET /users/{userid}'), 'GET /users/{userid}'), 'not of a status the operation does not document')
  t.notOk(isApiError(decodeError(undefined, new SyntaxError('x'), 'GET /users/{userid}'), 'GET /users/{userid}'), 'not of another kind')
  t.equal(httpErrorOfText(new Response(null, { status: 500 }), '').body, undefined, 'no body, no media type: undefined')
  t.equal(httpErrorOfText(new Response(null, { status: 500, headers: { 'content-type': 'text/plain' } }), '42').body, '42', 'a text stays a text')
  t.equal(httpErrorOfText(new Response(null, { status: 500, headers: { 'content-type': 'application/problem+json' } }), '{"a":1').body, '{"a":1', 'JSON that does not parse: its text')
  t.same(httpErrorOfText(new Response(null, { status: 500, headers: { 'content-type': 'application/problem+json; charset=utf-8' } }), '{"a":1}').body, { a: 1 }, 'a JSON media type with a suffix')
  t.equal(httpErrorOfText(new Response(null, { status: 500, headers: { 'content-type': 'application/json' } }), '').body, '', 'an empty JSON body: its text')
  t.equal(httpError(new Response(null, { status: 418, statusText: 'I\'m a teapot' }), 'tea').message, '418 I\'m a teapot: tea', 'a text body in the message')
  t.equal(httpError(new Response(null, { status: 500 }), null).message, '500 : null', 'a null body')
  t.same([isJson(new Response(null, { headers: { 'content-type': 'text/x-application/json' } })), isJson(new Response(null, { headers: { 'content-type': 'APPLICATION/JSON' } }))], [false, true])
  t.same([isJson(new Response(null, { headers: { 'content-type': 'text/json' } })), isJson(new Response(null, { headers: { 'content-type': 'application/jsonx' } })), isJson(new Response(null))], [false, false, false])

  const user = new AbortController()
  user.abort('stop')
  const aborted = kind(user.signal.reason, { signal: user.signal })
  t.same([aborted.kind, aborted.kind === 'aborted' ? aborted.cause : undefined, aborted.operation], ['aborted', 'stop', 'GET /hello'], 'the caller\'s signal, its reason')
  t.equal(kind(new DOMException('x', 'AbortError')).kind, 'aborted', 'an AbortError without a signal known')
  const timer = AbortSignal.abort(new DOMException('late', 'TimeoutError'))
  const timedOut = kind(timer.reason, { timeout: { signal: timer, ms: 30 } })
  t.same([timedOut.kind, timedOut.kind === 'timeout' ? timedOut.timeout : 0, timedOut.message], ['timeout', 30, 'no answer within 30 ms'], 'the client\'s timeout')
  const both = kind(timer.reason, { signal: user.signal, timeout: { signal: timer, ms: 30 } })
  t.same([both.kind, both.kind === 'timeout' ? both.timeout : 0], ['timeout', 30], 'the timeout\'s own reason: the client\'s timeout, though the caller aborted too')
  const racing = kind(new TypeError('terminated'), { signal: notAborted(), timeout: { signal: timer, ms: 30 } })
  t.same([racing.kind, racing.kind === 'timeout' ? racing.timeout : 0], ['timeout', 30], 'whatever the call threw once the timeout passed, the caller not aborting: the timeout')
  t.equal(kind('stop', { signal: user.signal, timeout: { signal: timer, ms: 30 } }).kind, 'aborted', 'the caller\'s reason: aborted, though the timeout passed too')
  const notYet = new AbortController()
  t.equal(kind(new TypeError('fetch failed'), { signal: notYet.signal, timeout: { signal: notYet.signal, ms: 30 } }).kind, 'network', 'signals not aborted: what fetch threw')
  const other = kind(new DOMException('late', 'TimeoutError'))
  t.same([other.kind, other.kind === 'timeout' ? other.timeout : 0], ['timeout', undefined], 'AbortSignal.timeout() of the caller: a timeout of unknown length')
  const decode = kind(new SyntaxError('Unexpected end of JSON input'))
  t.same([decode.kind, decode.kind === 'decode' ? decode.response : null, decode.message], ['decode', undefined, 'the answer could not be read: Unexpected end of JSON input'])
  const network = kind(new TypeError('fetch failed', { cause: new Error('ECONNREFUSED') }))
  t.same([network.kind, network.message], ['network', 'no answer: fetch failed'])
  const thrown: Failure = kind('a string')
  t.same([thrown.kind, thrown.message], ['network', 'no answer: a string'], 'anything else fetch throws: no answer')
  t.equal(decodeError(undefined, 'odd').message, 'the answer could not be read: odd')
  t.same([decode.kind === 'decode' ? decode.header : 0, decodeError(undefined, 'odd', 'GET /albert', 'X-An-Int').header], [undefined, 'X-An-Int'], 'the header, when one is at fault')
})
