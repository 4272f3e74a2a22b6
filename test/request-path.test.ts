import fs from 'node:fs'
import t from 'tap'
import { DOCUMENT, requestPathDocument } from './helpers/request-path.js'
import { CONTRACTS_DOCUMENT, registeringFile, renderRouteContracts, routeContracts } from './helpers/route-contracts.js'

// docs/request-path.md lists the hooks each route runs, docs/route-contracts.md the statuses and
// body limit of each and who added them: a change to them must update them on purpose.

t.test('docs/request-path.md is the request path of the app as it is', async (t) => {
  const document = await requestPathDocument()
  t.equal(fs.readFileSync(DOCUMENT, 'utf8'), document, 'out of date: run `npm run request-path`, and read what changed')
  t.notMatch(document, /`anonymous`|\(native\)/, 'every hook has a name and a file')
  t.match(document, /\| `GET \/users` \| [A-Z] \| routes\/users\/index\.ts \|/, 'a route, the chain of its hooks and its handler')
  t.match(document, /- onRequest: `countInFlight` \(plugins\/edge\/metrics\.ts\) → `requireHost` \(plugins\/edge\/host\.ts\) → `onRequest` \(@fastify\/under-pressure\) → `answeredUnread` \(plugins\/not-found\.ts\)/, 'hooks in the order they run, with their files')
})

// One build of the service (two, with RATE_LIMIT_MAX) for both tests below.
const contracts = await routeContracts()

t.test('docs/route-contracts.md: every route\'s statuses and body limit, and who added each', async (t) => {
  const document = renderRouteContracts(contracts)
  t.ok(fs.existsSync(CONTRACTS_DOCUMENT) && fs.readFileSync(CONTRACTS_DOCUMENT, 'utf8') === document, 'out of date: run `npm run request-path`, and read what changed')
  t.notMatch(document, /\(native\)|\(unknown\)/, 'every hook and every route has a file')
  const contract = (route: string) => contracts.routes.find((found) => found.route === route)
  t.match(contract('POST /users'), {
    registeredIn: 'routes/users/index.ts',
    own: ['201', '204', '400', '406', '409', '413', '415', '503'],
    added: [['plugins/negotiation.ts', ['415 (schema replaced)']]],
    more: [['plugins/edge/rate-limit.ts', ['429']]],
    bodyLimit: 8192,
    bodyLimitBy: 'plugins/config.ts'
  }, 'a route of its folder; the statuses it declares, those the plugins add, its body limit')
  t.match(contract('GET /users/list-all'), { registeredIn: 'routes/users/list-all/index.ts', added: [['plugins/auth.ts', ['401']], ['plugins/negotiation.ts', ['413']]], bodyLimit: 0 })
  t.match(contract('GET /colors'), { registeredIn: 'routes/colors/index.ts', own: ['206', '400', '406'], added: [['plugins/edge/under-pressure.ts', ['503']], ['plugins/negotiation.ts', ['413']]] })
  t.match(contract('PUT /products/:productid'), { added: [['plugins/auth.ts', ['401', '429']], ['plugins/negotiation.ts', ['415 (schema replaced)']], ['plugins/validation.ts', ['414']]] }, 'a write behind a token')
  t.match(document, /\| plugins\/edge\/under-pressure\.ts \| 503 to \d+ \|/, 'the hooks and what they add')
  t.ok(contracts.routes.length > 30, 'every route')
})

t.test('no module of lib/ registers a route: the route files do (routes/README.md)', async (t) => {
  const { routes } = contracts
  const fromLib = routes.filter(({ registeredIn }) => registeredIn.startsWith('lib/')).map(({ route, registeredIn }) => `${route} by ${registeredIn}`)
  t.same(fromLib, [], 'routes registered by lib/')
  for (const { route, registeredIn } of routes) {
    t.match(registeredIn, /^(routes\/|plugins\/|@fastify\/)/, `${route}: by a route file, a plugin or a package`)
  }
  // The first frame outside Fastify and the helper is the caller of fastify.get/.post/.route.
  const stack = [
    'Error: registered',
    '    at recordRoute (file:///srv/test/helpers/route-contracts.ts:1:1)',
    '    at Object.addNewRoute (file:///srv/node_modules/fastify/lib/route.js:300:14)',
    '    at node:internal/process/task_queues:105:5',
    '    at Object.get (/srv/node_modules/fastify/fastify.js:278:30)',
    '    at collectionRoutes (/srv/lib/collection-routes.ts:68:11)',
    '    at users (/srv/routes/users/index.ts:14:3)'
  ].join('\n').replaceAll('/srv', import.meta.dirname.replace(/\/test$/, ''))
  t.equal(registeringFile(stack), 'lib/collection-routes.ts', 'a lib module that calls fastify.get is the one named')
  t.equal(registeringFile('Error\n    at async file:///x/node_modules/@fastify/static/index.js:1:1'), '@fastify/static', 'a package\'s route')
  t.equal(registeringFile('Error\n    at node:internal/x:1:1'), '(unknown)')
})
