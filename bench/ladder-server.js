// The rungs of ladder.bench.js between raw node:http and the service on GET /hello?name=x, each
// adding one kind of work to the rung below it, all answering the service's bytes (FIXTURES, as
// raw-server.js takes them):
//   RUNG=1  Fastify, logger off, the answer's bytes sent from a synchronous handler
//   RUNG=2  the same with pino at warn (fastify-floor.js: the endpoints bench's "bare Fastify")
//   RUNG=3  a route schema (query string validated, answer serialized), an async handler
//   RUNG=4  ten hooks that do nothing, as many as the service runs on the route
import Fastify from 'fastify'

const rung = Number(process.env.RUNG)
const fixtures = JSON.parse(Buffer.from(process.env.FIXTURES ?? 'e30=', 'base64').toString('utf8'))
const { headers, body } = fixtures['/hello?name=x']
const bytes = Buffer.from(body, 'base64')
// Fastify sets these two itself when it serializes.
const others = Object.fromEntries(Object.entries(headers).filter(([name]) => name !== 'content-type' && name !== 'content-length'))

const app = Fastify({ logger: rung >= 2 ? { level: 'warn' } : false })
app.get('/health', async () => ({ status: 'ok' }))
if (rung >= 4) {
  for (let i = 0; i < 5; i++) app.addHook('onRequest', (_request, _reply, done) => done())
  for (let i = 0; i < 4; i++) app.addHook('onSend', (_request, _reply, payload, done) => done(null, payload))
  app.addHook('onResponse', (_request, _reply, done) => done())
}
if (rung >= 3) {
  app.get('/hello', {
    schema: {
      querystring: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      response: { 200: { type: 'object', properties: { msg: { type: 'string' } }, required: ['msg'] } }
    }
  }, async (request, reply) => {
    reply.headers(others)
    return { msg: `Hello, ${request.query.name}` }
  })
} else {
  app.get('/hello', (_request, reply) => { reply.headers(headers).send(bytes) })
}
await app.listen({ port: Number(process.env.PORT), host: process.env.HOST })
