import t from 'tap'
import { walkRoutes } from '../helpers/index.js'

// Handlers with nothing to await return their answer, which Fastify sends at once, rather than a
// promise of it (routes/README.md): the probe, the example endpoints the benches measure, and the
// others that answer from what they have at hand.
const PLAIN = [
  'GET /health', 'GET /hello', 'GET /position/:x/:y', 'GET /persons', 'GET /colors', 'GET /users/:userid',
  'GET /a', 'GET /isaac', 'GET /albert', 'POST /marketing', 'GET /docs', 'GET /openapi.json'
]

t.test('the handlers with nothing to await are plain functions, not async ones', async (t) => {
  const { endpoints } = await walkRoutes(t)
  for (const name of PLAIN) {
    const endpoint = endpoints.find(({ method, url }) => `${method} ${url}` === name)
    t.ok(endpoint, `${name} is a route`)
    t.not(endpoint?.route.handler.constructor.name, 'AsyncFunction', `${name}: no promise per request`)
  }
})
