import { Readable } from 'node:stream'
import fp from 'fastify-plugin'
import type { FastifyReply } from 'fastify'
import type { Static, TSchema } from '@sinclair/typebox'
import { RETRY_AFTER_SECONDS, exposed } from '../lib/errors.js'
import { ShuttingDown } from '../lib/error-codes.js'
import { NdjsonBody, type ItemSource, type Serialize } from '../lib/ndjson-body.js'

declare module 'fastify' {
  interface FastifyReply {
    /**
     * Sends `source` as NDJSON: each item written by a serializer compiled once from `itemSchema`,
     * one compact JSON value and `\n` per item, in chunks, pulled only as fast as the client reads.
     * The Content-Type is the one the route negotiated. Returns the reply.
     */
    ndjson<S extends TSchema> (source: ItemSource<Static<S>>, itemSchema: S): FastifyReply
  }
}

/** A stream the shutdown stops before its first line: nothing is sent yet, so an answer the client can retry elsewhere. */
const shuttingDown = () => exposed(new ShuttingDown(), { 'retry-after': String(RETRY_AFTER_SECONDS) })

/**
 * NDJSON responses from any sync or async source: `return reply.ndjson(source, ItemSchema)`.
 * Backpressure, batching, disconnects and source errors are handled once, by lib/ndjson-body.ts;
 * here the stream is tied to the shutdown: its drain's end (`fastify.drainEnded`) cuts it; and
 * it holds one of its client's stream slots (`fastify.streamSlots`, STREAMS_PER_CLIENT) while it runs.
 * A HEAD request gets the headers only: nothing is pulled from the source.
 */
export default fp(async function ndjson (fastify) {
  fastify.decorateReply('ndjson', function ndjson<S extends TSchema> (this: FastifyReply, source: ItemSource<Static<S>>, itemSchema: S) {
    if (this.request.method === 'HEAD') return this.send(Readable.from([]))
    // Compiled once per route and schema (Fastify caches it in the route's context).
    const serialize = this.compileSerializationSchema(itemSchema) as Serialize
    // nginx (and proxies that honour it) pass the lines on as they come instead of buffering them.
    this.header('x-accel-buffering', 'no')
    // Before the status is sent: a client with as many streams open as it may gets the 429.
    const release = this.server.streamSlots.take(this.request.ip)
    return this.send(new NdjsonBody(this, source, serialize, { stop: this.server.drainEnded, refusal: shuttingDown, release }))
  })
}, { name: 'ndjson', dependencies: ['shutdown', 'streams'] })
