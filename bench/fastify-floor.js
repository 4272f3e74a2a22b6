// The framework's own cost, as a ladder of servers answering the service's bytes (FIXTURES, as
// raw-server.js takes them), each rung adding one kind of work to the one below:
//   RUNG=1  Fastify, logger off, each answer's bytes sent from a synchronous handler
//   RUNG=2  the same with pino at LOG_LEVEL (warn): the ladder's "bare Fastify", the default
//   RUNG=3  the floor: each endpoint with its route's schema (the service's own, from dist/schemas:
//           the query string, captures and headers validated, the answer serialized from an
//           object) and an async handler; the service's other headers set in one call
//   RUNG=4  and ten hooks that do nothing, as many as the service ran on a route (ladder.bench.js)
// PEER=1 on rung 3 is the peer: the Fastify org's production plugins as a team following
// fastify/demo would register them, with their defaults (bench/README.md lists them).
// HOLD_TICK_SHAPE=1 holds one of Node's nextTick entries, as the service does (lib/next-tick-shape.ts):
// what the floor costs without the slowdown V8 falls into after an idle collection.
// Comparing it with raw node:http shows what Fastify itself costs; the service's gap beyond it is ours.
import { randomUUID } from 'node:crypto'
import Fastify from 'fastify'
import { ColorsPageSchema, colorsRequestHeaders } from '../dist/schemas/color.js'
import { HelloMessageSchema, HelloQuerySchema } from '../dist/schemas/hello.js'
import { PersonsSchema } from '../dist/schemas/person.js'
import { PositionParamsSchema, PositionSchema } from '../dist/schemas/position.js'
import { UsersQuerySchema, UsersRequestHeadersSchema, UsersWithCountSchema } from '../dist/schemas/user.js'
import { API_HEADERS } from '../dist/lib/security-headers.js'
import { holdNextTickShape } from '../dist/lib/next-tick-shape.js'
import { rangePattern } from '../dist/lib/range/pattern.js'

const rung = Number(process.env.RUNG ?? 2)
const peer = process.env.PEER === '1'
if (process.env.HOLD_TICK_SHAPE === '1') holdNextTickShape()
const fixtures = JSON.parse(Buffer.from(process.env.FIXTURES ?? 'e30=', 'base64').toString('utf8'))

/**
 * The Range header of GET /colors as routes/colors builds it from its collection's fields (name,
 * hex, rgb). Its pattern is the OpenAPI document's only: validation is the route's either way.
 */
const COLORS_HEADERS = colorsRequestHeaders(rangePattern(new Map([['name', { type: 'string' }], ['hex', { type: 'string' }], ['rgb', { type: 'integer' }]])))

/** Each endpoint's schema, and how its handler answers from the request and the fixture's body. */
const ROUTES = {
  '/hello': { schema: { querystring: HelloQuerySchema, response: { 200: HelloMessageSchema } }, answer: (request) => ({ msg: `Hello, ${request.query.name}` }) },
  '/position/:x/:y': { schema: { params: PositionParamsSchema, response: { 200: PositionSchema } }, answer: (request) => ({ xCoord: request.params.x, yCoord: request.params.y }) },
  '/users': { schema: { querystring: UsersQuerySchema, headers: UsersRequestHeadersSchema, response: { 200: UsersWithCountSchema } } },
  '/persons': { schema: { response: { 200: PersonsSchema } } },
  '/colors': { schema: { headers: COLORS_HEADERS, response: { 206: ColorsPageSchema } } }
}

/** The route of a fixture's path: /position/1/2 is /position/:x/:y. */
const routeOf = (url) => url.startsWith('/position/') ? '/position/:x/:y' : url

const app = Fastify({
  logger: rung >= 2 ? { level: process.env.LOG_LEVEL ?? 'warn' } : false,
  ...(peer ? { requestIdHeader: 'x-request-id', genReqId: () => randomUUID() } : {})
})
if (peer) await registerPeerPlugins(app)
app.get('/health', async () => ({ status: 'ok' }))
if (rung >= 4) {
  for (let i = 0; i < 5; i++) app.addHook('onRequest', (_request, _reply, done) => done())
  for (let i = 0; i < 4; i++) app.addHook('onSend', (_request, _reply, payload, done) => done(null, payload))
  app.addHook('onResponse', (_request, _reply, done) => done())
}
for (const [path, { status, headers, body }] of Object.entries(fixtures)) {
  const url = path.split('?')[0]
  const route = ROUTES[routeOf(url)]
  if (rung >= 3 && route !== undefined) {
    // Fastify sets the type and length itself when it serializes; the peer's plugins set the
    // security headers and the request id.
    const own = (name) => name !== 'content-type' && name !== 'content-length' &&
      !(peer && (name in API_HEADERS || name === 'x-request-id'))
    const others = Object.fromEntries(Object.entries(headers).filter(([name]) => own(name)))
    const object = JSON.parse(Buffer.from(body, 'base64').toString('utf8'))
    const answer = route.answer ?? (() => object)
    app.get(routeOf(url), { schema: route.schema }, async (request, reply) => {
      reply.code(status).headers(others)
      return answer(request)
    })
    continue
  }
  const bytes = Buffer.from(body, 'base64')
  app.get(url, (_request, reply) => { reply.code(status).headers(headers).send(bytes) })
}
await app.listen({ port: Number(process.env.PORT), host: process.env.HOST })

/**
 * What a team following fastify/demo would deploy, each plugin as it comes: security headers,
 * CORS, the overload guard (the service's default threshold), a global rate limit (its limit
 * raised out of the benchmark's way), compression, request metrics.
 */
async function registerPeerPlugins (fastify) {
  const [helmet, cors, underPressure, rateLimit, compress, metrics] = await Promise.all(
    ['@fastify/helmet', '@fastify/cors', '@fastify/under-pressure', '@fastify/rate-limit', '@fastify/compress', 'fastify-metrics']
      .map(async (name) => (await import(name)).default))
  await fastify.register(helmet)
  await fastify.register(cors)
  await fastify.register(underPressure, { maxEventLoopDelay: 1000 })
  await fastify.register(rateLimit, { max: 1e9, timeWindow: 60_000 })
  await fastify.register(compress)
  await fastify.register(metrics.default ?? metrics, { endpoint: '/metrics' })
}
