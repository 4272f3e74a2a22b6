import { spawnSync } from 'node:child_process'
import t from 'tap'
import { serverEntry, startServer } from './helper.js'

t.test('the production entry point serves /health over HTTP', async (t) => {
  const server = await startServer(t)
  const res = await fetch(`${server.url}/health`)
  t.equal(res.status, 200)
  t.equal(res.headers.get('content-type'), 'application/json; charset=utf-8')
  t.same(await res.json(), { status: 'ok' })
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0, 'SIGTERM ends it cleanly')
})

t.test('start-up is refused for an invalid variable, naming it', async (t) => {
  for (const [name, value] of [['PORT', 'abc'], ['LOG_LEVEL', 'loud'], ['DOCS_CATCH_ALL', 'perhaps']]) {
    const run = spawnSync(process.execPath, [serverEntry], {
      env: { PATH: process.env.PATH, [name as string]: value },
      encoding: 'utf8',
      timeout: 10_000
    })
    t.not(run.status, 0, `${name}=${value} exits non-zero`)
    t.match(run.stderr, new RegExp(`Invalid configuration: .*${name}`), `${name}=${value} is named`)
  }
})
