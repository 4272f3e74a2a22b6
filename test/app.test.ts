import t from 'tap'
import Fastify from 'fastify'
import app, { serverOptions } from '../app.js'
import { loadConfig } from '../lib/config.js'
import { defaultServerOptions, logSink } from './helpers/index.js'

t.test('the Authorization header never reaches the logs', async (t) => {
  const logs = logSink('trace')
  const server = Fastify({ ...defaultServerOptions, logger: logs.logger })
  server.get('/', async (request) => {
    request.log.info({ headers: request.headers }, 'headers as received')
    return 'ok'
  })
  t.teardown(() => server.close())
  await server.inject({ url: '/', headers: { authorization: 'Basic c2VydmFudDpzZXJ2ZXI=', cookie: 'session=s3cr3t' } })
  const all = JSON.stringify(logs.entries)
  t.match(all, /headers as received/)
  t.notMatch(all, /c2VydmFudDpzZXJ2ZXI=/, 'credentials redacted')
  t.notMatch(all, /s3cr3t/, 'cookie redacted')
  t.match(all, /\[redacted\]/)
})

t.test('edge: false is the service without its edge plugins (what bench/edge.bench.js measures them against)', async (t) => {
  const config = loadConfig({ DOCS_CATCH_ALL: 'false', METRICS_PORT: '0' })
  const serve = async (edge: boolean) => {
    const server = Fastify({ ...serverOptions(config, { edge }), logger: false })
    await server.register(app, { config, edge })
    t.teardown(() => server.close())
    return server.inject({ url: '/hello?name=x', headers: { 'x-request-id': 'from-the-proxy', 'accept-encoding': 'gzip' } })
  }
  const [full, bare] = [await serve(true), await serve(false)]
  t.equal(bare.body, full.body, 'the same answer')
  t.equal(full.headers['x-request-id'], 'from-the-proxy')
  t.ok(full.headers['content-security-policy'], 'security headers')
  t.notOk(bare.headers['x-request-id'], 'no request-id header')
  t.notOk(bare.headers['content-security-policy'], 'no security headers')
  t.same(Object.keys(bare.headers).sort(), ['connection', 'content-length', 'content-type', 'date', 'vary'].filter((name) => name in bare.headers), 'nothing but the answer\'s own')
})
