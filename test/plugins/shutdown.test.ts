import http from 'node:http'
import t from 'tap'
import { baseUrl, build } from '../helper.js'

function get (url: string, agent: http.Agent): Promise<{ status: number, connection?: string, body: string }> {
  return new Promise((resolve, reject) => {
    http.get(url, { agent }, (res) => {
      let body = ''
      res.on('data', (chunk) => { body += chunk })
      res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection, body }))
    }).on('error', reject)
  })
}

t.test('closing: /ready is 503 at once, open connections are answered with Connection: close during the drain, new ones refused', async (t) => {
  const app = await build(t, { SHUTDOWN_DRAIN: '300' })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const url = baseUrl(app)
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => agent.destroy())
  t.match(await get(`${url}/ready`, agent), { status: 200, connection: 'keep-alive' })

  const closed = app.close()
  const ready = await get(`${url}/ready`, agent)
  t.equal(ready.status, 503)
  t.equal(ready.connection, 'close')
  t.match(JSON.parse(ready.body), { code: 'FST_ERR_NOT_READY', message: 'Not ready: the service is shutting down' })
  t.equal(await get(`${url}/hello`, agent).catch((err: NodeJS.ErrnoException) => err.code), 'ECONNREFUSED')
  await closed
})

t.test('an app that is not listening (inject) closes at once', async (t) => {
  const app = await build(t, { SHUTDOWN_DRAIN: '60000' })
  const started = Date.now()
  await app.close()
  t.ok(Date.now() - started < 5000, 'no drain without a listener')
})
