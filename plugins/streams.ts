import fp from 'fastify-plugin'
import { StreamSlots } from '../lib/stream-slots.js'

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * The streamed answers open per client address (lib/stream-slots.ts), held to
     * STREAMS_PER_CLIENT: a stream takes a slot before its status is sent (an NDJSON answer, a long
     * list), or is refused with 429, and gives it back when it is over.
     */
    readonly streamSlots: StreamSlots
  }
}

/** The cap on streams per client address: one count per process, shared by every streamed route. */
export default fp(async function streams (fastify) {
  fastify.decorate('streamSlots', new StreamSlots(fastify.config.STREAMS_PER_CLIENT))
}, { name: 'streams', dependencies: ['config'] })
