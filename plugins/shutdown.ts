import fp from 'fastify-plugin'

/**
 * Graceful close, for every entry point (server.ts, `fastify start`): once the app starts closing,
 * the responses still in flight say `Connection: close`. Without it a keep-alive connection that
 * was busy when the close began stays open after its response, and the close waits for it until
 * the grace period runs out. Requests that arrive during the close get 503 from Fastify itself.
 */
export default fp(async function shutdown (fastify) {
  let closing = false
  fastify.addHook('preClose', async () => { closing = true })
  // A callback hook: it runs for every response, and most of the time does nothing.
  fastify.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close')
    done(null, payload)
  })
}, { name: 'shutdown' })
