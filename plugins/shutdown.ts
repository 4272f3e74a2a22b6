import { setMaxListeners } from 'node:events'
import { Server } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import fp from 'fastify-plugin'

declare module 'fastify' {
  interface FastifyInstance {
    /** True from the moment the app starts closing (SIGTERM): /ready answers 503. */
    readonly closing: boolean
    /**
     * Aborted when the drain period after SIGTERM is over: what is still streaming is cut at its
     * next item boundary, so that the close does not wait for it.
     */
    readonly drainEnded: AbortSignal
  }
}

/**
 * A close that loses nothing, for every entry point (server.ts, `fastify start`). When the app
 * starts closing (SIGTERM):
 *
 * 1. `closing` turns true (/ready answers 503) and the listener closes: new connections are
 *    refused, and the proxy in front sends them to another replica.
 * 2. For SHUTDOWN_DRAIN ms, requests on connections already open are answered, each with
 *    `Connection: close` (Fastify itself marks requests that arrive while closing; this plugin
 *    marks those already in flight), so that keep-alive clients move on after their answer
 *    instead of finding their connection closed under a request they are sending. The drain is
 *    over sooner when the last open connection has closed: no request can come any more.
 * 3. Then `drainEnded` is aborted (NDJSON streams are cut after a whole line, their connection
 *    closed without the body's last chunk, so that clients and proxies see they were cut short:
 *    plugins/ndjson.ts), idle connections are closed, and the close waits for the last responses
 *    before the app's onClose hooks run.
 *
 * SHUTDOWN_GRACE (server.ts) bounds the whole. An app that is not listening (tests) just closes.
 */
export default fp(async function shutdown (fastify) {
  let closing = false
  const drain = new AbortController()
  // Every running stream listens to it: no leak warning for many streams.
  setMaxListeners(Infinity, drain.signal)
  fastify.decorate('closing', { getter: () => closing })
  fastify.decorate('drainEnded', { getter: () => drain.signal })

  fastify.addHook('preClose', async () => {
    closing = true
    const server = fastify.server
    if (!server.listening) {
      drain.abort()
      return
    }
    // One turn of the event loop first, to accept the connections the kernel has already taken:
    // closing the listener resets those it holds.
    await new Promise((resolve) => setImmediate(resolve))
    // net.Server's close, not http.Server's: stop accepting without closing the idle keep-alive
    // connections yet. Its callback comes once every connection has ended. (Fastify's own close
    // of the server afterwards then finds it closed already.)
    const ended = new Promise<void>((resolve) => { Server.prototype.close.call(server, () => resolve()) })
    const drainMs = fastify.config.SHUTDOWN_DRAIN
    fastify.log.info({ drainMs }, 'closing: new connections refused, open ones drained')
    const drained = new AbortController()
    await Promise.race([ended, sleep(drainMs, undefined, { signal: drained.signal }).catch(() => {})])
    drained.abort()
    drain.abort()
    server.closeIdleConnections()
    await ended
  })

  // A callback hook: it runs for every response, and most of the time does nothing.
  fastify.addHook('onSend', function closeWhileClosing (_request, reply, payload, done) {
    if (closing) reply.header('connection', 'close')
    done(null, payload)
  })
}, { name: 'shutdown', dependencies: ['config'] })
