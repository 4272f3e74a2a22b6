import { spawn } from 'node:child_process'
import { once } from 'node:events'
import path from 'node:path'
import { createInterface } from 'node:readline'
import t from 'tap'
import { projectRoot } from '../../lib/project-root.js'
import { until } from '../helpers/index.js'

const fastifyCli = path.join(projectRoot, 'node_modules', 'fastify-cli', 'cli.js')
const cliEntry = path.join(projectRoot, 'dist', 'cli.js')

t.test('fastify start (npm run dev) takes the settings server.ts takes: address, port, log level, proxy trust, close grace', async (t) => {
  // A .env of the working directory, with a typo in it.
  const cwd = t.testdir({ '.env': 'LOG_LEVL=debug\n' })
  const child = spawn(process.execPath, [fastifyCli, 'start', '--config', cliEntry, cliEntry], {
    cwd,
    env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', TRUST_PROXY: '1', SHUTDOWN_DRAIN: '1000', METRICS_PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  const logs: Array<Record<string, any>> = []
  const lines = createInterface({ input: child.stdout })
  const listening = new Promise<string>((resolve) => {
    lines.on('line', (line) => {
      const entry = JSON.parse(line)
      logs.push(entry)
      const url = /^Server listening at (http:\/\/127\.0\.0\.1:\d+)$/.exec(entry.msg)?.[1]
      if (url !== undefined) resolve(url)
    })
  })
  const url = await listening
  t.pass(`listens on HOST: ${url}`)

  const res = await fetch(`${url}/hello?name=cli&token=s3cret`, { headers: { 'x-forwarded-for': '203.0.113.9' } })
  t.same(await res.json(), { msg: 'Hello, cli' })
  // The request's line is written once its answer has gone (lib/access-log.ts).
  await until(() => logs.some((entry) => entry.msg === 'request completed'))
  const incoming = logs.find((entry) => entry.msg === 'request completed')
  t.ok(incoming !== undefined, 'LOG_LEVEL=info: requests are logged (fastify-cli alone logs at fatal)')
  t.equal(incoming?.req.remoteAddress, '203.0.113.9', 'TRUST_PROXY=1: the forwarded client address')
  t.equal(incoming?.req.url, '/hello?name=cli&token=[redacted]', 'a credential\'s value redacted, as by server.ts')
  t.match(logs.find((entry) => entry.variable === 'LOG_LEVL'), { level: 40, closest: 'LOG_LEVEL' }, 'a typo in .env is warned of, as by server.ts')

  const exited = once(child, 'exit')
  child.kill('SIGTERM')
  const [code] = await exited
  t.equal(code, 0, 'SIGTERM: a drain of 1 s fits SHUTDOWN_GRACE (fastify-cli alone gives 500 ms), exit 0')
  t.notMatch(JSON.stringify(logs), /s3cret/, 'no line holds the value')
})
