import t from 'tap'
import Fastify from 'fastify'
import { build, logSink } from '../helpers/index.js'
import { lazyChildLoggerFactory } from '../../lib/logger.js'

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

t.test('in the service: request lines carry the reqId at info, none are written at warn', async (t) => {
  const info = logSink('info')
  const app = await build(t, {}, { logger: info.logger })
  const res = await app.inject({ url: '/hello', headers: { 'x-request-id': 'abc-123' } })
  t.equal(res.statusCode, 200)
  t.same(info.entries.filter((e) => e.reqId === 'abc-123').map((e) => e.msg), ['incoming request', 'request completed'])

  const warn = logSink('warn')
  const quiet = await build(t, {}, { logger: warn.logger })
  await quiet.inject({ url: '/hello' })
  t.equal(warn.entries.filter((e) => e.reqId !== undefined).length, 0)
})
