import { spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import pg from 'pg'
import t from 'tap'
import { SUPPORTED_NODE } from '../../lib/package-info.js'
import { projectRoot } from '../../lib/project-root.js'
import { serverEntry, startServer, testDatabase, until, type RunningServer } from '../helpers/index.js'
import { unprivilegedUrl } from '../helpers/postgres.js'

t.test('the production entry point serves /health over HTTP', async (t) => {
  const server = await startServer(t)
  const res = await fetch(`${server.url}/health`)
  t.equal(res.status, 200)
  t.equal(res.headers.get('content-type'), 'application/json; charset=utf-8')
  t.same(await res.json(), { status: 'ok' })
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0, 'SIGTERM ends it cleanly')
})

t.test('the production entry point logs no value of a credential sent in a query string', async (t) => {
  const server = await startServer(t, { DOCS_CATCH_ALL: 'false' })
  const statuses: number[] = []
  for (const url of ['/hello?name=Ada&token=s3cret', '/nowhere?access_token=s3cret', '/hello%E0?Password=s3cret']) {
    statuses.push((await fetch(`${server.url}${url}`)).status)
  }
  t.same(statuses, [200, 404, 400])
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0)
  // Each request's line (lib/access-log.ts): "request completed", or the refusal of a URL that cannot be decoded.
  t.same(server.logs.filter((entry) => entry.req !== undefined).map((entry) => (entry.req as { url: string }).url),
    ['/hello?name=Ada&token=[redacted]', '/nowhere?access_token=[redacted]', '/hello%E0?Password=[redacted]'])
  t.notMatch(JSON.stringify(server.logs), /s3cret/, 'in no line')
})

t.test('the entry point runs the bundle through V8\'s code cache, written at the first start and read after', async (t) => {
  const directory = t.testdir()
  const env = { NODE_COMPILE_CACHE: directory, NODE_ENV: 'production', STORE: 'memory' }
  const cacheFiles = () => fs.readdirSync(directory).filter((name) => /^service-[0-9a-f]+-v[\d.]+-\w+\.bin$/.test(name))
  const run = async (extra: Record<string, string> = {}) => {
    const server = await startServer(t, { ...env, ...extra })
    t.equal((await fetch(`${server.url}/health`)).status, 200, 'it serves')
    return server
  }
  const stop = async (server: RunningServer) => {
    server.child.kill('SIGTERM')
    t.equal(await server.exited, 0)
  }

  const first = await run()
  await until(() => cacheFiles().length === 1)
  await stop(first)
  const [name] = cacheFiles() as [string]
  const file = path.join(directory, name)
  t.ok(fs.statSync(file).size > 100_000, `${name} holds the code compiled while the service started`)

  // A cache that V8 takes is left as it is; one written anew would be another file (renamed in).
  const written = fs.statSync(file).ino
  await stop(await run())
  t.equal(fs.statSync(file).ino, written, 'the second start reads it and does not write it again')

  // Damaged (or from another V8): refused by V8, the service starts all the same and replaces it.
  fs.writeFileSync(file, Buffer.alloc(4096, 7))
  await stop(await run())
  await until(() => fs.statSync(file).size > 100_000)
  t.pass('a damaged cache is replaced')

  // Node's own switch turns it off: nothing is read or written.
  const off = t.testdir()
  await stop(await run({ NODE_COMPILE_CACHE: off, NODE_DISABLE_COMPILE_CACHE: '1' }))
  t.same(fs.readdirSync(off), [], 'NODE_DISABLE_COMPILE_CACHE=1 writes nothing')

  // A directory it cannot write (here: below a file) costs the speed only.
  const blocked = path.join(t.testdir({ file: '' }), 'file', 'cache')
  await stop(await run({ NODE_COMPILE_CACHE: blocked }))
})

t.test('without a bundle beside it (tsc\'s dist/), the entry point imports the service as it is', async (t) => {
  const server = await startServer(t, {}, { entry: path.join(path.dirname(serverEntry), '..', 'server.js') })
  t.equal((await fetch(`${server.url}/health`)).status, 200)
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0)
})

t.test('start-up is refused for an invalid variable, naming it', async (t) => {
  for (const [name, value] of [['PORT', 'abc'], ['LOG_LEVEL', 'loud'], ['DOCS_CATCH_ALL', 'perhaps'], ['NODE_ENV', 'prod']]) {
    const run = spawnSync(process.execPath, [serverEntry], {
      env: { PATH: process.env.PATH, [name as string]: value },
      encoding: 'utf8',
      timeout: 30_000
    })
    t.not(run.status, 0, `${name}=${value} exits non-zero`)
    t.match(run.stderr, new RegExp(`Invalid configuration: .*${name}`), `${name}=${value} is named`)
  }
})

t.test('every invalid variable is named at once, a line each, before anything starts; no bundle source printed', async (t) => {
  const run = spawnSync(process.execPath, [serverEntry], {
    env: { PATH: process.env.PATH, PORT: 'abc', LOG_LEVEL: 'loud', TRUST_PROXY: 'yes' },
    encoding: 'utf8',
    timeout: 30_000
  })
  t.equal(run.status, 1, 'exit 1')
  t.equal(run.stdout, '', 'nothing started, nothing logged')
  t.same(run.stderr.trim().split('\n').map((line) => /^Invalid configuration: env\/(\w+): /.exec(line)?.[1]), ['PORT', 'LOG_LEVEL', 'TRUST_PROXY'])
  t.ok(run.stderr.length < 1000, `${run.stderr.length} characters on stderr`)
})

t.test('a host that does not resolve, or a port in use, is refused as an invalid setting is: one line naming the setting and its value, exit 1', async (t) => {
  const taken = net.createServer()
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
  t.teardown(() => taken.close())
  const { port } = taken.address() as net.AddressInfo
  const cases: Array<[Record<string, string>, string | RegExp]> = [
    [{ PORT: String(port) }, `Invalid configuration: env/PORT: ${port} is in use by another process on 127.0.0.1: stop it or choose another port`],
    [{ METRICS_PORT: String(port) }, `Invalid configuration: env/METRICS_PORT: ${port} is in use by another process on 127.0.0.1: stop it or choose another port`],
    // The metrics listener, which opens first, takes HOST when METRICS_HOST is unset: HOST is what to change.
    [{ HOST: 'nowhere.invalid' }, /^Invalid configuration: env\/HOST: nowhere\.invalid does not resolve to an address \(getaddrinfo \w+\): give an address of this machine, or a name that resolves to one$/],
    [{ METRICS_HOST: 'nowhere.invalid' }, /^Invalid configuration: env\/METRICS_HOST: nowhere\.invalid does not resolve to an address/]
  ]
  for (const [env, line] of cases) {
    const run = spawnSync(process.execPath, [serverEntry], {
      env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: '0', METRICS_PORT: '0', ...env },
      encoding: 'utf8',
      timeout: 30_000
    })
    const name = Object.entries(env).map(([key, value]) => `${key}=${value}`).join(' ')
    t.equal(run.status, 1, `${name}: exit 1`)
    t.equal(run.stderr.split('\n').filter(Boolean).length, 1, `${name}: one line`)
    t.match(run.stderr.trim(), line, `${name}: the setting named, with its value`)
    t.notMatch(run.stdout, /"level":60|"stack"/, `${name}: no fatal log line with a stack besides`)
  }
})

t.test('a .env file of the working directory is read; the environment wins over it; a name it sets that is no setting is warned of', async (t) => {
  const cwd = t.testdir({ '.env': 'AUTH_REALM=from-dotenv\nAPI_TOKENS=dotenv-token\nAUTH_RELAM=typo\nPROT=1\n' })
  const server = await startServer(t, { API_TOKENS: 'shell-token' }, { cwd })
  t.match(server.logs.find((entry) => entry.variable === 'AUTH_RELAM'),
    { level: 40, closest: 'AUTH_REALM', msg: '.env sets AUTH_RELAM, which is no setting of the service: ignored (did you mean AUTH_REALM?)' }, 'a typo, named with the setting it meant')
  t.match(server.logs.find((entry) => entry.variable === 'PROT'),
    { level: 40, closest: 'PORT', msg: '.env sets PROT, which is no setting of the service: ignored (did you mean PORT?)' }, 'two letters swapped in a short name too')
  t.equal(server.logs.filter((entry) => entry.variable !== undefined).length, 2, 'a line for each typo, none for the settings')
  const challenge = await fetch(`${server.url}/users/list-all`)
  t.equal(challenge.headers.get('www-authenticate'), 'Basic realm="from-dotenv"', 'a variable only in .env is read from it')
  const post = (token: string) => fetch(`${server.url}/products`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: '{"productId":1}'
  })
  t.equal((await post('shell-token')).status, 204, 'a variable set in the environment keeps its value')
  t.equal((await post('dotenv-token')).status, 401, 'and the file does not override it')
})

t.test('what an operator may not have meant is said at start: a setting mistyped in the environment, the store chosen and why, a Node other than the supported one', async (t) => {
  const server = await startServer(t, { DATABSE_URL: 'postgres://app:secret@db/app', NODE_OPTIONS: `--import=data:text/javascript,Object.defineProperty(process.versions,'node',{value:'${SUPPORTED_NODE + 2}.0.0'})` })
  t.match(server.logs.find((entry) => entry.variable === 'DATABSE_URL'),
    { level: 40, closest: 'DATABASE_URL', msg: 'the environment sets DATABSE_URL, which is no setting of the service: ignored (did you mean DATABASE_URL?)' }, 'the mistyped name, and the setting it meant')
  t.match(server.logs.find((entry) => entry.store !== undefined),
    { level: 30, store: 'memory', msg: 'store: memory, as no DATABASE_URL is set: the data lives in this process, and is lost when it stops' }, 'the store, and why')
  t.match(server.logs.find((entry) => entry.supported !== undefined),
    { level: 40, node: `${SUPPORTED_NODE + 2}.0.0`, supported: SUPPORTED_NODE, msg: `Node ${SUPPORTED_NODE + 2}.0.0 runs the service, which supports Node ${SUPPORTED_NODE} (the image's): run it on Node ${SUPPORTED_NODE}` }, 'the Node it supports')
  t.notOk(server.logs.some((entry) => entry.variable === 'NODE_OPTIONS' || entry.variable === 'PATH'), 'nothing said of what is no typo')
})

t.test('DATABASE_URL: two processes share one database, and a restart of both keeps the data', async (t) => {
  const env = { DATABASE_URL: await testDatabase() }
  const [a, b] = [await startServer(t, env), await startServer(t, env)]
  const created = await fetch(`${a.url}/users`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Ada Lovelace', age: 36, email: 'ada@engine.org', registration_date: '1843-07-01' })
  })
  t.equal(created.headers.get('location'), '/users/3')
  const before = await (await fetch(`${b.url}/users`)).text()
  t.match(JSON.parse(before), [{ name: 'Isaac Newton' }, { name: 'Albert Einstein' }, { name: 'Ada Lovelace' }], 'written on one, read on the other')
  for (const server of [a, b]) server.child.kill('SIGTERM')
  t.same([await a.exited, await b.exited], [0, 0], 'both stop cleanly')

  const [c, d] = [await startServer(t, env), await startServer(t, env)]
  t.equal(await (await fetch(`${c.url}/users`)).text(), before, 'everything is still there')
  t.equal((await fetch(`${d.url}/ready`)).status, 200, 'and ready')
  for (const server of [c, d]) server.child.kill('SIGTERM')
})

t.test('DATABASE_URL: an unreachable database stops start-up with a message naming it, exit 1', async (t) => {
  const closed = net.createServer()
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
  const { port } = closed.address() as net.AddressInfo
  await new Promise((resolve) => closed.close(resolve))
  // The password before the host, or in the query string: masked either way.
  for (const [url, shown] of [
    [`postgres://app:hunter2@127.0.0.1:${port}/app`, `postgres://app:***@127.0.0.1:${port}/app`],
    [`postgres://127.0.0.1:${port}/app?user=app&password=hunter2`, `postgres://127.0.0.1:${port}/app?user=app&password=***`]
  ] as const) {
    const run = spawnSync(process.execPath, [serverEntry], {
      env: { PATH: process.env.PATH, PORT: '0', DATABASE_URL: url, DATABASE_STARTUP_TIMEOUT: '0' },
      encoding: 'utf8',
      timeout: 30_000
    })
    t.equal(run.status, 1, 'exit 1')
    const fatal = run.stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line)).find((entry) => entry.level === 60)
    t.match(fatal?.msg, `could not start: The database at ${shown} is unreachable (attempts: 1): connect ECONNREFUSED`)
    t.equal(fatal?.err?.message.split('ECONNREFUSED').length, 2, 'the error says its cause once, not once more as its cause\'s message')
    t.notMatch(run.stdout + run.stderr, /hunter2/, 'the password is not shown')
    // Thrown in the bundle: its frames name the TypeScript sources (lib/bundle-stack.ts).
    t.match(fatal?.err?.stack, /[(/]lib\/postgres\/connect\.ts:\d+:\d+\)/, 'the stack names the TypeScript source')
    t.notMatch(fatal?.err?.stack, /service\.cjs/, 'not the bundle')
  }
})

t.test('migrating as a role that may not create in schema public: the start and `server.js migrate` say which setting runs them as one that may', async (t) => {
  const url = await unprivilegedUrl(t, await testDatabase())
  const role = new URL(url).username
  const entry = (args: string[]) => spawnSync(process.execPath, [serverEntry, ...args], {
    env: { PATH: process.env.PATH, PORT: '0', METRICS_PORT: '0', DATABASE_URL: url, DATABASE_STARTUP_TIMEOUT: '0' },
    encoding: 'utf8',
    timeout: 60_000
  })
  const fatal = (run: ReturnType<typeof entry>) => run.stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line)).find((entry) => entry.level === 60)?.msg
  const start = entry([])
  t.equal(start.status, 1, 'the start: exit 1')
  t.equal(fatal(start), `could not start: The role ${role} of DATABASE_URL may not change the schema (permission denied for schema public): set DATABASE_MIGRATION_URL to a role that may (the schema's owner), or apply the migrations as such a role with \`npm run migrate\` (\`node dist/bundle/server.js migrate\` in the image) and start with MIGRATE_ON_START=false`)
  const migrate = entry(['migrate'])
  t.equal(migrate.status, 1, 'server.js migrate: exit 1')
  t.equal(fatal(migrate), `could not migrate: The role ${role} of DATABASE_URL may not change the schema (permission denied for schema public): set DATABASE_MIGRATION_URL to a role that may (the schema's owner)`)
})

t.test('start-up retries an unreachable database for the whole DATABASE_STARTUP_TIMEOUT, past Fastify\'s 10 s for a plugin', async (t) => {
  const closed = net.createServer()
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
  const { port } = closed.address() as net.AddressInfo
  await new Promise((resolve) => closed.close(resolve))
  const started = Date.now()
  const run = spawn(process.execPath, [serverEntry], {
    env: { PATH: process.env.PATH, PORT: '0', METRICS_PORT: '0', DATABASE_URL: `postgres://app:secret@127.0.0.1:${port}/app`, DATABASE_STARTUP_TIMEOUT: '15000' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  run.stdout.on('data', (chunk: Buffer) => { stdout += String(chunk) })
  const [status] = await once(run, 'exit') as [number]
  t.equal(status, 1, 'exit 1')
  t.ok(Date.now() - started > 11_000, 'past Fastify\'s own 10 s')
  const fatal = stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line)).find((entry) => entry.level === 60)
  t.match(fatal?.msg, /^could not start: The database at .* is unreachable \(attempts: \d+\)/, 'the database is named, not a plugin that "did not start in time"')
})

t.test('a client that reads a stream as fast as it can does not keep others waiting', async (t) => {
  const server = await startServer(t)
  // A raw socket that drops what it reads: a client that keeps up with the server.
  const fast = net.connect(Number(new URL(server.url).port), '127.0.0.1')
  let received = 0
  fast.on('data', (chunk) => { received += chunk.length })
  fast.write('GET /userStream?count=10000000 HTTP/1.1\r\nHost: localhost\r\n\r\n')
  await until(() => received > 1_000_000)
  const others = await Promise.all([
    fetch(`${server.url}/hello?name=x`).then((res) => res.json()),
    fetch(`${server.url}/userStream?count=1`).then((res) => res.text())
  ])
  t.same(others, [{ msg: 'Hello, x' }, '{"name":"Isaac Newton","age":372,"email":"isaac@newton.co.uk","registration_date":"1683-03-01"}\n'],
    'the other requests are answered')
  t.ok(received < 900e6, `while the 10,000,000 lines are still streaming (${Math.round(received / 1e6)} MB of 920 read)`)
  fast.destroy()
})

t.test('server.js migrate: applies the migrations (by DATABASE_MIGRATION_URL when set) and exits 0; a failure exits 1 with the reason', async (t) => {
  const migrate = (env: Record<string, string>) => spawnSync(process.execPath, [serverEntry, 'migrate'], {
    env: { PATH: process.env.PATH, LOG_LEVEL: 'info', DATABASE_STARTUP_TIMEOUT: '0', ...env },
    encoding: 'utf8',
    timeout: 60_000
  })
  const logs = (run: ReturnType<typeof migrate>) => run.stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line))
  const versionOf = async (url: string) => {
    const client = new pg.Client(url)
    await client.connect()
    try {
      return (await client.query('SELECT max(version)::int AS version FROM schemaversion')).rows[0].version as number
    } finally {
      await client.end()
    }
  }
  const latest = fs.readdirSync(path.join(projectRoot, 'migrations')).filter((name) => /^\d+\.do\./.test(name)).length

  const url = await testDatabase()
  const first = migrate({ DATABASE_URL: url, MIGRATE_ON_START: 'false' })
  t.equal(first.status, 0, 'exit 0, whatever MIGRATE_ON_START says')
  t.same(logs(first).filter((entry) => /migrat/.test(entry.msg)).map((entry) => entry.msg),
    [...Array.from({ length: latest }, () => 'database migration applied'), 'database migrated'])
  t.equal(await versionOf(url), latest, 'the database is at the latest migration')
  const again = migrate({ DATABASE_URL: url })
  t.equal(again.status, 0)
  t.match(logs(again).find((entry) => entry.msg === 'database migrated'), { version: latest }, 'again: nothing to apply')

  // In production, as the Kubernetes init container runs it: the migration role's URL is used.
  const other = await testDatabase()
  const production = migrate({ NODE_ENV: 'production', DATABASE_URL: 'postgres://app:x@127.0.0.1:1/none', DATABASE_MIGRATION_URL: other })
  t.equal(production.status, 0, 'DATABASE_MIGRATION_URL, not DATABASE_URL')
  t.equal(await versionOf(other), latest)

  const unreachable = migrate({ DATABASE_URL: 'postgres://app:hunter2@127.0.0.1:1/app' })
  t.equal(unreachable.status, 1)
  t.match(logs(unreachable).find((entry) => entry.level === 60)?.msg, /^could not migrate: The database at postgres:\/\/app:\*\*\*@127\.0\.0\.1:1\/app is unreachable/)
  t.notMatch(unreachable.stdout + unreachable.stderr, /hunter2/, 'the password is not shown')
  const none = migrate({})
  t.equal(none.status, 1)
  t.match(logs(none).find((entry) => entry.level === 60)?.msg, 'could not migrate: No database to migrate: set DATABASE_MIGRATION_URL or DATABASE_URL')

  const unknown = spawnSync(process.execPath, [serverEntry, 'migrat'], { env: { PATH: process.env.PATH }, encoding: 'utf8', timeout: 30_000 })
  t.equal(unknown.status, 2, 'an unknown command: exit 2')
  t.match(unknown.stderr, /^Unknown command "migrat": `node server.js` serves, `node server.js migrate` applies the database's migrations/)
})
