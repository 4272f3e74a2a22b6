import t from 'tap'
import Fastify from 'fastify'
import { serverOptions } from '../../app.js'
import { loadConfig } from '../../lib/config/load.js'
import { build, logSink } from '../helpers/index.js'
import { bindRequestLogger, lazyChildLoggerFactory } from '../../lib/logger.js'

/** A root pino logger writing to a sink, its `child` counted. */
function counted (level: string) {
  const sink = logSink(level)
  const root = Fastify({ logger: sink.logger }).log
  let children = 0
  const child = root.child
  // pino's children inherit from their parent: `this` keeps a child's child bound to that child.
  root.child = function (this: typeof root, ...args: Parameters<typeof child>) { children++; return child.apply(this, args) }
  return { root, entries: sink.entries, children: () => children }
}

t.test('no pino child is made for a request that writes nothing at an enabled level', async (t) => {
  const { root, entries, children } = counted('warn')
  const log = lazyChildLoggerFactory.call(Fastify(), root, { reqId: 'r-1' }, {}, undefined as never)
  log.trace('a'); log.debug('b'); log.info('incoming request')
  t.equal(children(), 0, 'below the level: nothing made')
  t.equal(log.level, 'warn')
  log.warn('careful'); log.error({ err: 'x' }, 'broken'); log.fatal('gone')
  t.equal(children(), 1, 'one child, on the first line written')
  t.same(entries.map((e) => [e.level, e.reqId, e.msg]), [[40, 'r-1', 'careful'], [50, 'r-1', 'broken'], [60, 'r-1', 'gone']])
  ;(log.silent as () => void)()
  t.equal(entries.length, 3)
})

t.test('every level reaches pino when enabled; a level of its own; children of children', async (t) => {
  const { root, entries } = counted('info')
  const log = lazyChildLoggerFactory.call(Fastify(), root, { reqId: 'r-2' }, { level: 'trace' }, undefined as never)
  t.equal(log.level, 'trace', "the request's own level")
  log.trace('t'); log.debug('d'); log.info('i')
  t.same(entries.map((e) => e.msg), ['t', 'd', 'i'])
  log.level = 'error'
  t.equal(log.level, 'error', 'set on the real child')
  log.warn('dropped by pino')
  log.child({ part: 'db' }).error('nested')
  t.same(entries.slice(3).map((e) => [e.reqId, e.part, e.msg]), [['r-2', 'db', 'nested']])
})

t.test('in the service: the request\'s line carries the reqId at info, none is written at warn', async (t) => {
  const info = logSink('info')
  const app = await build(t, {}, { logger: info.logger })
  const res = await app.inject({ url: '/hello', headers: { 'x-request-id': 'abc-123' } })
  t.equal(res.statusCode, 200)
  t.same(info.entries.filter((e) => e.reqId === 'abc-123').map((e) => e.msg), ['request completed'])

  const warn = logSink('warn')
  const quiet = await build(t, {}, { logger: warn.logger })
  await quiet.inject({ url: '/hello' })
  t.equal(warn.entries.filter((e) => e.reqId !== undefined).length, 0)
})

t.test('bindRequestLogger: the bindings are on every line from then on; bound before the first line, no child is made for them', async (t) => {
  const { root, entries, children } = counted('info')
  const log = lazyChildLoggerFactory.call(Fastify(), root, { reqId: 'r-3' }, {}, undefined as never)
  log.debug('below the level')
  t.ok(bindRequestLogger(log, { trace_id: 't-1', span_id: 's-1' }))
  t.equal(children(), 0, 'binding makes nothing')
  log.info('first'); log.warn('second')
  t.equal(children(), 1, 'one child, made with the bindings')
  t.same(entries.map((e) => [e.reqId, e.trace_id, e.span_id, e.msg]), [['r-3', 't-1', 's-1', 'first'], ['r-3', 't-1', 's-1', 'second']])

  // Bound after a line was written (at info, "incoming request" may come first): a child of that child.
  const late = lazyChildLoggerFactory.call(Fastify(), root, { reqId: 'r-4' }, {}, undefined as never)
  late.info('before')
  bindRequestLogger(late, { trace_id: 't-2' })
  late.info('after')
  t.equal(children(), 3)
  t.same(entries.slice(2).map((e) => [e.reqId, e.trace_id, e.msg]), [['r-4', undefined, 'before'], ['r-4', 't-2', 'after']])
})

t.test('bindRequestLogger leaves alone a logger lazyChildLoggerFactory did not make', async (t) => {
  const { root, entries } = counted('info')
  t.equal(bindRequestLogger(root, { trace_id: 't-3' }), false)
  root.info('plain')
  t.equal(entries[0]?.trace_id, undefined)
})

t.test('a level set on a request logger holds below the level it was made at', async (t) => {
  const { root, entries } = counted('warn')
  const log = lazyChildLoggerFactory.call(Fastify(), root, { reqId: 'r-5' }, {}, undefined as never)
  log.debug('dropped: below warn')
  log.level = 'debug'
  log.debug('kept')
  t.same(entries.map((e) => e.msg), ['kept'])
})

t.test('serverLogger: the server logger makes the request loggers, lazily, through Fastify\'s own child factory', async (t) => {
  const sink = logSink('warn')
  const server = Fastify(serverOptions(loadConfig({}), { logger: sink.logger }))
  t.teardown(() => server.close())
  // A factory of ours would have Fastify check the logger it returns on every request (lib/logger.ts).
  t.equal(server.childLoggerFactory, Fastify({ logger: false }).childLoggerFactory, 'Fastify\'s default child factory')
  const lazy: boolean[] = []
  server.get('/', async (request) => {
    lazy.push(bindRequestLogger(request.log, { part: 'route' }))
    request.log.info('below the level')
    request.log.warn('written')
    return 'ok'
  })
  server.log.warn('the server speaks')
  await server.inject({ url: '/', headers: { 'x-request-id': 'r-6' } })
  t.same(lazy, [true], 'the request logger is lazy')
  t.same(sink.entries.map((e) => [e.reqId, e.part, e.msg]), [[undefined, undefined, 'the server speaks'], ['r-6', 'route', 'written']])
})

t.test('serverLogger: Fastify\'s serializers of a reply and an error, the service\'s of a request', async (t) => {
  const sink = logSink('info')
  const server = Fastify(serverOptions(loadConfig({}), { logger: sink.logger }))
  t.teardown(() => server.close())
  server.get('/fails', async () => { throw new Error('broken') })
  await server.inject({ url: `/fails?${'q'.repeat(2000)}` })
  const completed = sink.entries.find((e) => e.msg === 'request completed') as { req: { url: string } }
  t.ok(completed.req.url.length < 1100, 'the URL shortened')
  t.match(completed, { res: { statusCode: 500 } })
  t.match(sink.entries.find((e) => e.err !== undefined), { err: { type: 'Error', message: 'broken', stack: String } })
})
