import { setImmediate as nextTurn } from 'node:timers/promises'
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import fp from 'fastify-plugin'
import { SchemaDoesNotCompile } from '../lib/error-codes.js'

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * A getter of what `make` makes (a schema's validator or serialiser), run once, on the getter's
     * first call rather than now. Whatever has not been made by then is made once the server listens.
     * A schema that does not compile is a SchemaDoesNotCompile naming `schema` (the route and the part).
     */
    compileLater<T>(make: () => T, schema: string): () => T
    /** Makes every function still waiting; resolves once all are made (the tests' way to see that every schema compiles). */
    compilePending(): Promise<void>
  }
}

/**
 * Schemas compiled after the server listens, not before (issue 12: compiling the validators and
 * serialisers of some 50 routes at `ready` was a fifth of the cold start). Fastify calls the
 * compilers at `ready`; these return functions that compile on their first call. Once the server
 * listens, what has not been compiled yet is compiled in the background, one schema per turn of the
 * event loop, so that a request arriving meanwhile waits for one compile at most; a request that
 * needs a schema first compiles it itself.
 */
export default fp(async function compileLater (fastify) {
  let pending: Array<() => unknown> = []

  fastify.decorate('compileLater', function <T> (make: () => T, schema: string) {
    let made: T | undefined
    const get = () => {
      if (made === undefined) {
        try {
          made = make()
        } catch (err) {
          throw Object.assign(new SchemaDoesNotCompile(schema, (err as Error).message, { cause: err }), { schema })
        }
      }
      return made
    }
    pending.push(get)
    return get
  })

  fastify.decorate('compilePending', async function () {
    const waiting = pending
    pending = []
    for (const make of waiting) {
      await nextTurn()
      make()
    }
  })

  // Fastify's own serialiser compiler (fast-json-stringify), its result made on first use, and
  // once per schema: many routes answer with the same one (the error body above all).
  const serializer = SerializerSelector()({}, {})
  type Route = Parameters<typeof serializer>[0]
  const bySchema = new WeakMap<object, () => (data: unknown) => string>()
  function serializerOf (route: Route) {
    let serialize = bySchema.get(route.schema as object)
    if (serialize === undefined) {
      serialize = fastify.compileLater(() => serializer(route), `${route.method} ${route.url}: the ${route.httpStatus} response`)
      bySchema.set(route.schema as object, serialize)
    }
    return serialize
  }
  fastify.setSerializerCompiler((route) => {
    const serialize = serializerOf(route as Route)
    return (data) => serialize()(data)
  })

  fastify.addHook('onListen', async function () {
    const started = performance.now()
    const count = pending.length
    fastify.compilePending().then(
      () => fastify.log.info({ compiled: count, ms: Math.round(performance.now() - started) }, 'schemas compiled'),
      (err: unknown) => fastify.log.error({ err, schema: (err as { schema?: string }).schema }, 'a schema does not compile'))
  })
}, { name: 'compile-later' })
