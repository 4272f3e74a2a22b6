import { once } from 'node:events'
import http from 'node:http'
import t from 'tap'
import { baseUrl, build } from '../helpers/index.js'
import { get } from '../helpers/shutdown.js'

// The close that loses nothing (plugins/shutdown.ts), in-process through app.close(). The
// production entry point (server.ts) on SIGTERM, a process of its own: test/system/shutdown.test.ts.

t.test('closing: /ready is 503 at once, open connections are answered with Connection: close during the drain, new ones refused', async (t) => {
  // A drain far longer than the test: it ends when the last connection has closed.
  const app = await build(t, { SHUTDOWN_DRAIN: '60000', SHUTDOWN_GRACE: '120000' })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const url = baseUrl(app)
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => agent.destroy())
  t.match(await get(`${url}/ready`, agent), { status: 200, headers: { connection: 'keep-alive' } })

  const started = Date.now()
  const closed = app.close()
  const ready = await get(`${url}/ready`, agent)
  t.equal(ready.status, 503)
  t.equal(ready.headers.connection, 'close')
  t.match(JSON.parse(ready.body), { code: 'API_ERR_NOT_READY', message: 'Not ready: the service is shutting down' })
  t.equal(await get(`${url}/hello`, agent).catch((err: NodeJS.ErrnoException) => err.code), 'ECONNREFUSED')
  await closed
  t.ok(Date.now() - started < 30_000, 'the drain ended with the last connection, not at SHUTDOWN_DRAIN')
})

t.test('an idle keep-alive connection is kept through SHUTDOWN_DRAIN, then closed', async (t) => {
  const app = await build(t, { SHUTDOWN_DRAIN: '500' })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => agent.destroy())
  await get(`${baseUrl(app)}/ready`, agent)
  const [socket] = Object.values(agent.freeSockets).flat()
  const hungUp = once(socket!, 'close')

  const started = Date.now()
  await app.close()
  // The close cannot be over before the drain's timer fires (by the wall clock a few ms early at
  // most: libuv counts a timer's delay from the event loop's cached time).
  t.ok(Date.now() - started >= 450, 'the close waited for the drain while the connection was open')
  await hungUp
  t.pass('then the server closed the idle connection')
})

t.test('an app that is not listening (inject) closes at once', async (t) => {
  const app = await build(t, { SHUTDOWN_DRAIN: '60000', SHUTDOWN_GRACE: '120000' })
  const started = Date.now()
  await app.close()
  t.ok(Date.now() - started < 30_000, 'no drain without a listener')
})
