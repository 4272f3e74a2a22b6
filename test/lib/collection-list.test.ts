import t, { type Test } from 'tap'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { buildPlugins, json } from '../helpers/index.js'
import { answerList } from '../../lib/collection-list.js'
import { memoryRepository } from '../../lib/memory/repository.js'
import type { Repository } from '../../lib/repository.js'

const Note = Type.Object({ text: Type.String() })

/** A list route on `repository` that keeps what answerList returned for each request. */
async function listServer (t: Test, repository: Repository<{ text: string }>) {
  const answered: unknown[] = []
  const app = await buildPlugins(t, (server: FastifyInstance) => {
    server.get('/notes', {
      schema: { produces: ['application/json'], response: { 200: Type.Array(Note), 206: Type.Array(Note) } }
    }, (request, reply) => {
      const answer = answerList(request, reply, { repository, countHeader: 'note-count' })
      answered.push(answer)
      return answer
    })
  }, { DOCS_CATCH_ALL: 'false' })
  return { app, answered }
}

t.test('a short list the store has at hand is answered then and there, without a promise', async (t) => {
  const { app, answered } = await listServer(t, memoryRepository([{ text: 'one' }, { text: 'two' }]))
  const whole = await app.inject({ url: '/notes' })
  t.equal(whole.statusCode, 200)
  t.same(json(whole), [{ text: 'one' }, { text: 'two' }])
  t.equal(whole.headers['note-count'], '2')
  t.equal(answered[0], undefined, 'sent before the handler returned')

  const page = await app.inject({ url: '/notes', headers: { range: 'id; limit 1' } })
  t.equal(page.statusCode, 206)
  t.same(json(page), [{ text: 'one' }])
  t.ok(answered[1] instanceof Promise, 'a page by Range: a promise')
})

t.test('a store that answers by a promise: the list is sent when it has read it', async (t) => {
  const memory = memoryRepository([{ text: 'one' }])
  const later: Repository<{ text: string }> = { ...memory, listing: async (query) => memory.listing(query) }
  const { app, answered } = await listServer(t, later)
  const whole = await app.inject({ url: '/notes' })
  t.equal(whole.statusCode, 200)
  t.same(json(whole), [{ text: 'one' }])
  t.equal(whole.headers['note-count'], '1')
  t.ok(answered[0] instanceof Promise)
})
