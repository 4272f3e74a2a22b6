// The framework's own cost, as a ladder of servers answering the service's bytes (FIXTURES, as
// raw-server.js takes them), each rung adding one kind of work to the one below:
//   RUNG=1  Fastify, logger off, each answer's bytes sent from a synchronous handler
//   RUNG=2  the same with pino at LOG_LEVEL (warn): the endpoints bench's "bare Fastify", the default
//   RUNG=3  on GET /hello, a route schema (query string validated, answer serialized), an async handler
//   RUNG=4  and ten hooks that do nothing, as many as the service runs on the route
// Comparing it with raw node:http shows what Fastify itself costs; the service's gap beyond it is ours.
import Fastify from 'fastify'

const rung = Number(process.env.RUNG ?? 2)
const fixtures = JSON.parse(Buffer.from(process.env.FIXTURES ?? 'e30=', 'base64').toString('utf8'))
const app = Fastify({ logger: rung >= 2 ? { level: process.env.LOG_LEVEL ?? 'warn' } : false })
app.get('/health', async () => ({ status: 'ok' }))
if (rung >= 4) {
  for (let i = 0; i < 5; i++) app.addHook('onRequest', (_request, _reply, done) => done())
  for (let i = 0; i < 4; i++) app.addHook('onSend', (_request, _reply, payload, done) => done(null, payload))
  app.addHook('onResponse', (_request, _reply, done) => done())
}
for (const [path, { status, headers, body }] of Object.entries(fixtures)) {
  const url = path.split('?')[0]
  if (rung >= 3 && url === '/hello') {
    // Fastify sets these two itself when it serializes.
    const others = Object.fromEntries(Object.entries(headers).filter(([name]) => name !== 'content-type' && name !== 'content-length'))
    app.get('/hello', {
      schema: {
        querystring: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        response: { 200: { type: 'object', properties: { msg: { type: 'string' } }, required: ['msg'] } }
      }
    }, async (request, reply) => {
      reply.headers(others)
      return { msg: `Hello, ${request.query.name}` }
    })
    continue
  }
  const bytes = Buffer.from(body, 'base64')
  app.get(url, (_request, reply) => { reply.code(status).headers(headers).send(bytes) })
}
await app.listen({ port: Number(process.env.PORT), host: process.env.HOST })
