import t from 'tap'
import { Type, type TObject } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { assertError, buildPlugins, json } from '../helpers/index.js'
import { memoryRepository } from '../../lib/memory/repository.js'
import { collectionRoutes, preferences, type Collection } from '../../lib/collection-routes.js'

t.test('preferences: RFC 7240 parsing', async (t) => {
  const cases: Array<[string | undefined, Array<[string, string]>]> = [
    [undefined, []],
    ['', []],
    ['return=representation', [['return', 'representation']]],
    ['Return=Representation', [['return', 'representation']]],
    ['return="minimal"', [['return', 'minimal']]],
    ['respond-async, wait=100', [['respond-async', ''], ['wait', '100']]],
    ['return=minimal; foo="bar", handling=lenient', [['return', 'minimal'], ['handling', 'lenient']]],
    [' return = representation ,, ', [['return', 'representation']]],
    ['return=minimal, return=representation', [['return', 'minimal']]],
    ['=x, return', [['return', '']]]
  ]
  for (const [header, expected] of cases) {
    t.same([...preferences(header)], expected, String(header))
  }
})

/** The five routes of a collection, registered as a route file registers them (routes/products/index.ts). */
function registerAll (notes: FastifyInstance, collection: Collection<TObject>) {
  const note = collectionRoutes(collection, notes)
  notes.get('/', note.list)
  notes.post('/', note.add)
  notes.get('/:noteid', note.view)
  notes.put('/:noteid', note.update)
  notes.delete('/:noteid', note.delete)
}

t.test('the factory: one collection from an item schema, an id name and a repository', async (t) => {
  const Note = Type.Object({ text: Type.String() }, { examples: [{ text: 'hello' }] })
  const repository = memoryRepository<{ text: string }>()
  const app = await buildPlugins(t, (server: FastifyInstance) => {
    server.register(async (notes) => {
      registerAll(notes, { item: Note, name: 'note', id: 'noteid', repository, writeAuth: 'basic' })
    }, { prefix: '/api/notes' })
    server.register(async (readOnly) => {
      const note = collectionRoutes({ item: Note, name: 'note', id: 'noteid', repository }, readOnly)
      readOnly.get('/', note.list)
      readOnly.get('/:noteid', note.view)
    }, { prefix: '/read-only' })
  }, { DOCS_CATCH_ALL: 'false' })
  const auth = { authorization: `Basic ${Buffer.from('servant:server').toString('base64')}` }

  const created = await app.inject({ method: 'POST', url: '/api/notes', payload: { text: 'one' }, headers: auth })
  t.equal(created.statusCode, 204)
  t.equal(created.headers.location, '/api/notes/1', 'Location under the prefix the routes are registered on')
  assertError(t, await app.inject({ method: 'POST', url: '/api/notes', payload: { text: 'two' } }), 401)
  t.same(json(await app.inject({ url: '/api/notes' })), [{ text: 'one' }], 'reads are public')
  assertError(t, await app.inject({ url: '/api/notes/2' }), 404, 'No note with noteid 2')
  assertError(t, await app.inject({ url: '/api/notes/x' }), 400, 'params/noteid')

  t.same(json(await app.inject({ url: '/read-only/1' })), { text: 'one' }, 'the same repository')
  t.equal((await app.inject({ method: 'POST', url: '/read-only', payload: { text: 'x' } })).statusCode, 405, 'only the routes asked for')
  t.equal((await app.inject({ method: 'DELETE', url: '/read-only/1' })).statusCode, 405)
})

t.test('the factory documents every route: summary, produces and every status', async (t) => {
  const schemas = new Map<string, Record<string, unknown>>()
  const Note = Type.Object({ text: Type.String() })
  await buildPlugins(t, (server: FastifyInstance) => {
    server.addHook('onRoute', (route) => {
      if (route.method !== 'HEAD') schemas.set(`${route.method} ${route.url}`, route.schema as Record<string, unknown>)
    })
    server.register(async (notes) => {
      registerAll(notes, { item: Note, name: 'note', id: 'noteid', repository: memoryRepository<{ text: string }>(), writeAuth: 'bearer' })
    }, { prefix: '/notes' })
  }, { API_TOKENS: 'secret-token' })
  const statuses = (key: string) => Object.keys(schemas.get(key)?.response as object).map(Number)
  t.same([...schemas.keys()], ['GET /notes', 'POST /notes', 'GET /notes/:noteid', 'PUT /notes/:noteid', 'DELETE /notes/:noteid'])
  t.same(statuses('GET /notes'), [200, 206, 400, 406, 413, 429, 503])
  t.same(statuses('POST /notes'), [201, 204, 400, 401, 406, 409, 413, 415, 429, 503])
  t.same(statuses('GET /notes/:noteid'), [200, 400, 404, 406, 413, 414, 503])
  t.same(statuses('PUT /notes/:noteid'), [200, 204, 400, 401, 404, 406, 413, 414, 415, 429, 503])
  t.same(statuses('DELETE /notes/:noteid'), [204, 400, 401, 404, 406, 413, 414, 429, 503])
  for (const [key, schema] of schemas) {
    t.type(schema.summary, 'string', `${key}: summary`)
    t.same(schema.produces, ['application/json'], `${key}: produces`)
  }
  const post = schemas.get('POST /notes')?.response as Record<number, { headers?: { properties: Record<string, unknown>, required?: string[] } }>
  t.same(Object.keys(post[204]?.headers?.properties ?? {}), ['Location', 'Preference-Applied'], '204 declares its headers')
  t.same(post[204]?.headers?.required, ['Location'], 'Location is always sent')
  t.same(Object.keys(post[201]?.headers?.properties ?? {}), ['Location', 'Preference-Applied'])
  t.same(Object.keys(post[401]?.headers?.properties ?? {}), ['WWW-Authenticate'], 'the auth plugin adds the 401 of the credentials it enforces')
})

t.test('the factory registers nothing: the options of five routes, from plain values', async (t) => {
  const Note = Type.Object({ text: Type.String() })
  const place = (maxItems: number) => ({ prefix: '/notes', config: { BASE_PATH: '/api', COLLECTION_MAX_ITEMS: maxItems } })
  const note = collectionRoutes({ item: Note, name: 'note', id: 'noteid', repository: memoryRepository<{ text: string }>() }, place(10))
  t.same(Object.keys(note), ['list', 'add', 'view', 'update', 'delete'])
  t.same(note.add.config, {}, 'writes open without writeAuth')
  t.same(Object.keys(note.add.schema.response), ['201', '204', '400', '406', '409', '413', '415', '503'])
  t.match(note.add.schema.description, /`Location: \/notes\/<id>`/, 'the prefix documents the Location')
  const unbounded = collectionRoutes({ item: Note, name: 'note', id: 'noteid', repository: memoryRepository<{ text: string }>(), writeAuth: 'basic' }, place(0))
  t.notOk('409' in unbounded.add.schema.response, 'no ceiling, no 409')
  t.same(unbounded.delete.config, { auth: 'basic' })
})
