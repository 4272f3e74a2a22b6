import t from 'tap'
import { exposedHeaders } from '../../lib/exposed-headers.js'

t.test('the headers declared by the responses, in both forms, each once and in order, without the safelisted ones', async (t) => {
  const routes = [
    { response: { 200: { type: 'string', headers: { type: 'object', properties: { 'User-Count': {}, 'Content-Type': {} } } } } },
    { response: { 206: { headers: { 'Next-Range': {}, 'Last-Modified': {}, 'user-count': {} } }, 204: { type: 'null' }, 500: 'not a schema' } },
    undefined,
    {},
    { response: null },
    { response: { 200: null, 201: { headers: null } } }
  ]
  t.equal(exposedHeaders(routes, ['X-Request-Id']), 'Next-Range, User-Count, X-Request-Id')
  t.equal(exposedHeaders([], ['Cache-Control', 'Pragma', 'Expires', 'Content-Length', 'Content-Language']), '', 'the safelisted ones are never listed')
})
