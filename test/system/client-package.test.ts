import { spawn } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import ts from 'typescript'
import { startServer, until } from '../helpers/index.js'
import { projectRoot } from '../../lib/project-root.js'

// What a user does (docs/client.md): `npm pack` in client/ (its prepack script builds dist/), then
// `npm install` of the tarball in a project of their own, strict, without Node's types (as a
// browser build), which imports the package by its name. The project is compiled by the newest
// TypeScript (typescript-latest: 7 has only its command) with the examples of docs/client.md and
// of client/README.md and the fixtures of test/client/strict/ (lines marked @ts-expect-error must
// be errors: tsc reports one that is not as TS2578); then the examples run on Node 24 against the
// service. TypeScript 5.9 (typescript-5.9) compiles the same projects: a user may not have 7 yet.
//
// No network: npm installs the tarball as it would anywhere (its package.json, `files`,
// `exports`), and fetches the tarball's dependencies from a registry that this test serves on
// 127.0.0.1: openapi-fetch and what it depends on, packed from the repository's node_modules (what
// `npm ci` installed). The user's project thus names the client alone, and npm resolves the
// client's own `dependencies`, range included, as it would from npmjs.org. npm's cache and home
// are the test's, so no cache or .npmrc of the machine takes part.

const CLIENT = path.join(projectRoot, 'client')
const FIXTURES = path.join(projectRoot, 'test', 'client', 'strict')
/** The program that test/browser/client.js runs in Chromium too. */
const PROGRAM = path.join(projectRoot, 'test', 'client', 'program')
/** The compilers a user's project is compiled with: the newest (7), and the last of 5. */
const COMPILERS = {
  7: path.join(projectRoot, 'node_modules', 'typescript-latest', 'bin', 'tsc'),
  5.9: path.join(projectRoot, 'node_modules', 'typescript-5.9', 'bin', 'tsc')
}
const TSC = COMPILERS[7]
const NAME = 'servant-example-api-client'
/** Where the examples find the service; the test's service listens on a port of its own. */
const EXAMPLE_URL = 'http://localhost:3000'

interface PackageJson {
  name: string
  version: string
  private?: boolean
  type?: string
  exports?: Record<string, string | Record<string, string>>
  files?: string[]
  sideEffects?: boolean
  engines?: Record<string, string>
  scripts?: Record<string, string>
  dependencies?: Record<string, string>
  devDependencies?: Record<string, string>
}

const readJson = <T>(file: string): T => JSON.parse(fs.readFileSync(file, 'utf8')) as T
const rootPackage = readJson<PackageJson>(path.join(projectRoot, 'package.json'))
const clientPackage = readJson<PackageJson>(path.join(CLIENT, 'package.json'))

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'client-package-'))
t.teardown(() => fs.rmSync(work, { recursive: true, force: true }))
const dirs = Object.fromEntries(['home', 'cache', 'registry', 'app'].map((name) => {
  fs.mkdirSync(path.join(work, name))
  return [name, path.join(work, name)]
})) as Record<'home' | 'cache' | 'registry' | 'app', string>

/** The environment of the commands: this Node (24) first in the PATH, and nothing of the test's (tap's loaders in NODE_OPTIONS, npm's settings). */
const env = { PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH}`, HOME: dirs.home }

interface Ran { code: number | null, stdout: string, stderr: string }

/**
 * Runs a command to its end (a minute at most: a hang fails); its exit code and output. Through a
 * shell that empties NODE_OPTIONS: tap puts its loader there on every process spawned, and npm
 * would hand it on to the scripts and commands it runs (TypeScript 7's would then fail to load).
 */
async function run (command: string, args: string[], cwd: string, environment: NodeJS.ProcessEnv = env): Promise<Ran> {
  const child = spawn('/bin/sh', ['-c', 'unset NODE_OPTIONS; exec "$@"', 'sh', command, ...args], { cwd, env: environment, stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
  const [code] = await once(child, 'close') as [number | null]
  return { code, stdout, stderr }
}

/** npm's command, with the test's cache; throws with its output if it fails. */
async function npm (args: string[], cwd: string): Promise<string> {
  const ran = await run('npm', [...args, '--cache', dirs.cache, '--no-audit', '--no-fund', '--no-update-notifier'], cwd)
  if (ran.code !== 0) throw new Error(`npm ${args.join(' ')} exited with ${ran.code}:\n${ran.stdout}\n${ran.stderr}`)
  return ran.stdout
}

interface Packed { name: string, version: string, filename: string, integrity: string, files: Array<{ path: string }> }

/** The packages a package depends on, transitively, each found as Node finds it: in the nearest node_modules above the one that depends on it. */
function dependencyDirs (from: string, dependencies: Record<string, string>, found = new Set<string>()): Set<string> {
  for (const name of Object.keys(dependencies)) {
    let dir = from
    while (!fs.existsSync(path.join(dir, 'node_modules', name, 'package.json'))) {
      if (path.dirname(dir) === dir) throw new Error(`${name}, a dependency of ${from}, is not installed`)
      dir = path.dirname(dir)
    }
    const installed = path.join(dir, 'node_modules', name)
    if (found.has(installed)) continue
    found.add(installed)
    dependencyDirs(installed, readJson<PackageJson>(path.join(installed, 'package.json')).dependencies ?? {}, found)
  }
  return found
}

/**
 * A registry on 127.0.0.1 holding `packages` (their manifests and tarballs), as npm asks one:
 * `GET /<name>` answers the package's document, `GET /-/<file>` a tarball. Answers its URL and
 * the paths npm asked for.
 */
async function localRegistry (packages: Array<{ dir: string, packed: Packed }>): Promise<{ url: string, asked: string[] }> {
  const asked: string[] = []
  const documents = new Map<string, { name: string, 'dist-tags': Record<string, string>, versions: Record<string, unknown> }>()
  const tarballs = new Map<string, string>()
  const server = http.createServer((req, res) => {
    const pathname = decodeURIComponent(new URL(req.url ?? '/', 'http://registry').pathname)
    asked.push(pathname)
    const document = documents.get(pathname.slice(1))
    const tarball = tarballs.get(pathname)
    if (document !== undefined) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(document))
    } else if (tarball !== undefined) {
      res.writeHead(200, { 'content-type': 'application/octet-stream' })
      fs.createReadStream(tarball).pipe(res)
    } else {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Not found"}')
    }
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => { server.closeAllConnections(); server.close() })
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  for (const { dir, packed } of packages) {
    tarballs.set(`/-/${packed.filename}`, path.join(dirs.registry, packed.filename))
    const document = documents.get(packed.name) ?? { name: packed.name, 'dist-tags': { latest: packed.version }, versions: {} }
    const manifest = readJson<PackageJson>(path.join(dir, 'package.json'))
    document.versions[packed.version] = { ...manifest, dist: { tarball: `${url}/-/${packed.filename}`, integrity: packed.integrity } }
    documents.set(packed.name, document)
  }
  return { url, asked }
}

/** The TypeScript blocks of a Markdown file. */
function tsBlocks (file: string): string[] {
  return [...fs.readFileSync(file, 'utf8').matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1] as string)
}

// One run of npm packs the client as `npm pack` in client/ does (its prepack script builds dist/),
// and the registry's packages, the client's dependencies, from the repository's node_modules (as
// installed: they have no pack script of their own to run).
const dependencies = [...dependencyDirs(CLIENT, clientPackage.dependencies ?? {})]
const [clientPacked, ...packed] = JSON.parse(await npm(['pack', '.', ...dependencies, '--json', '--pack-destination', dirs.registry], CLIENT)) as [Packed, ...Packed[]]
const tarball = path.join(dirs.registry, clientPacked.filename)
const registry = await localRegistry(dependencies.map((dir, index) => ({ dir, packed: packed[index] as Packed })))

// The user's project: the tarball installed by npm; the examples, the fixtures and a probe of
// the project's strictness (below), each importing the package by its name.
const app = dirs.app
fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'client-user', version: '0.0.0', private: true, type: 'module' }))
await npm(['install', tarball, '--registry', `${registry.url}/`], app)

const docsExamples = tsBlocks(path.join(projectRoot, 'docs', 'client.md'))
const readmeExamples = tsBlocks(path.join(CLIENT, 'README.md'))
const examples = [
  ...docsExamples.map((text, index) => ({ name: `docs-example-${index}`, text })),
  ...readmeExamples.map((text, index) => ({ name: `readme-example-${index}`, text }))
]
// The service's URL is known once it listens: the examples are compiled with a placeholder.
for (const { name, text } of examples) fs.writeFileSync(path.join(app, `${name}.ts`), text.replaceAll(EXAMPLE_URL, '__SERVICE_URL__'))
fs.mkdirSync(path.join(app, 'fixtures'))
for (const name of fs.readdirSync(FIXTURES)) fs.copyFileSync(path.join(FIXTURES, name), path.join(app, 'fixtures', name))
fs.mkdirSync(path.join(app, 'program'))
for (const name of fs.readdirSync(PROGRAM)) fs.copyFileSync(path.join(PROGRAM, name), path.join(app, 'program', name))
fs.mkdirSync(path.join(app, 'probe'))
/** The message of a call that needs credentials the client was not given. */
const NEEDS_BASIC = 'needs Basic credentials: createApiClient({ credentials: { basic } })'
const NEEDS_BEARER = 'needs a Bearer token: createApiClient({ credentials: { bearer } })'
fs.writeFileSync(path.join(app, 'probe', 'credentials.ts'), [
  `import { createApiClient } from '${NAME}'`,
  'const anonymous = createApiClient({ baseUrl: \'http://localhost:3000\' })',
  'export const listed = anonymous.GET(\'/users/list-all\')',
  'export const empty = anonymous.GET(\'/users/list-all\', {})',
  'export const written = anonymous.POST(\'/products\', { body: { productId: 1, name: \'Pie\' } })',
  'export const paged = anonymous.page(\'GET /list-all/users\')'
].join('\n'))
fs.writeFileSync(path.join(app, 'probe', 'probe.ts'), [
  `import { unwrap } from '${NAME}'`,
  'export const bytes = Buffer.from(\'x\')',
  'export function first (list: string[] | undefined) { return list.length }',
  '// @ts-expect-error',
  'export const fine = unwrap'
].join('\n'))

/** The options of a user's strict project (and stricter: indexes, optional properties, type imports), with the DOM and no Node types (`Buffer` is an error), as a browser build has. */
const STRICT = {
  strict: true,
  exactOptionalPropertyTypes: true,
  noUncheckedIndexedAccess: true,
  verbatimModuleSyntax: true,
  target: 'ES2023',
  lib: ['ES2023', 'DOM'],
  types: []
}

/**
 * The module settings of a project run by Node (emitted to out/, where the examples run from; the
 * probe is compiled with it), and of one built by a bundler (Vite, esbuild...).
 */
const PROJECTS = {
  NodeNext: { compilerOptions: { ...STRICT, module: 'NodeNext', moduleResolution: 'NodeNext', rootDir: '.', outDir: 'out' }, include: ['*.ts', 'fixtures/*.ts', 'program/*.ts', 'probe/*.ts'] },
  Bundler: { compilerOptions: { ...STRICT, module: 'ESNext', moduleResolution: 'Bundler', noEmit: true }, include: ['*.ts', 'fixtures/*.ts', 'program/*.ts'] }
}

/** tsc (7, or 5.9) on a project of `app`: its diagnostics, one line each (`file(line,col): error TS<code>: message`, then the message's chain indented). */
async function compile (name: string, config: object, tsc = TSC): Promise<string[]> {
  const project = `tsconfig.${name}.json`
  fs.writeFileSync(path.join(app, project), JSON.stringify(config, null, 2))
  const { stdout, stderr } = await run(process.execPath, [tsc, '-p', project, '--pretty', 'false'], app)
  return [...stdout.split('\n'), ...stderr.split('\n')].filter((line) => line.trim() !== '')
}

/** The diagnostics of the probes, each `file:line: TS<code>`, and their messages. */
function probed (diagnostics: string[]): { codes: string[], messages: string[] } {
  const probes = diagnostics.filter((line) => line.startsWith('probe/'))
  return { codes: probes.map((line) => line.replace(/^(\S+)\((\d+),\d+\): error (TS\d+): .*$/, '$1:$2: $3')), messages: probes.map((line) => line.replace(/^.*?error TS\d+: /, '')) }
}

/** A promise that a test awaits later, its failure reported there (not as an unhandled rejection meanwhile). */
function later<T> (promise: Promise<T>): Promise<T> {
  promise.catch(() => {})
  return promise
}

// Side by side: the compilations and the service's start.
const compiled = {
  NodeNext: later(compile('NodeNext', PROJECTS.NodeNext)),
  Bundler: later(compile('Bundler', PROJECTS.Bundler)),
  NodeNext59: later(compile('NodeNext59', { ...PROJECTS.NodeNext, compilerOptions: { ...PROJECTS.NodeNext.compilerOptions, outDir: undefined, noEmit: true } }, COMPILERS[5.9])),
  Bundler59: later(compile('Bundler59', PROJECTS.Bundler, COMPILERS[5.9]))
}
const serverStarted = later(startServer(t))

t.test('client/package.json: the package of the service\'s version, ES modules only, with openapi-fetch', async (t) => {
  t.equal(clientPackage.name, NAME)
  t.equal(clientPackage.version, rootPackage.version, 'the service\'s version')
  t.equal(readJson<{ info: { version: string } }>(path.join(CLIENT, 'openapi.json')).info.version, clientPackage.version, 'that of the document it is generated from')
  t.not(clientPackage.private, true, 'it can be packed and published')
  t.equal(clientPackage.type, 'module')
  t.same(clientPackage.exports, {
    '.': { types: './dist/index.d.ts', default: './dist/index.js' },
    './openapi.json': './openapi.json'
  }, 'the client and its document; no `require` condition: ESM only')
  t.equal(clientPackage.sideEffects, false, 'bundlers may drop what is not imported')
  t.same(clientPackage.dependencies, { 'openapi-fetch': rootPackage.devDependencies?.['openapi-fetch'] }, 'openapi-fetch, in the range the repository builds and tests with')
  t.equal(clientPackage.engines?.node, '>=20.3', 'Node 20.3, the first with AbortSignal.any (and fetch, ReadableStream and AbortSignal.timeout as globals)')
  t.match(clientPackage.scripts?.prepack, /npm run build/, 'npm pack builds it')
})

t.test('the tarball: the compiled client, its declarations, its document and README; no source, no test', async (t) => {
  const files = clientPacked.files.map((file) => file.path).sort()
  const modules = fs.readdirSync(CLIENT).filter((name) => name.endsWith('.ts')).map((name) => name.slice(0, -3))
  t.same(modules.sort(), ['credentials', 'errors', 'forms', 'headers', 'index', 'ndjson', 'operation', 'operations', 'range', 'retry', 'schema'])
  for (const module of modules) {
    t.ok(files.includes(`dist/${module}.js`), `dist/${module}.js`)
    t.ok(files.includes(`dist/${module}.d.ts`), `dist/${module}.d.ts`)
  }
  t.ok(files.includes('package.json') && files.includes('README.md') && files.includes('openapi.json'), 'package.json, README.md, openapi.json')
  t.same(files.filter((file) => !/^dist\/[\w-]+\.(?:js|d\.ts)$/.test(file) && !['package.json', 'README.md', 'openapi.json'].includes(file)), [], 'nothing else')
  t.same(files.filter((file) => /(?<!\.d)\.ts$/.test(file) || /test/i.test(file)), [], 'no TypeScript source, no test')
  const installed = path.join(app, 'node_modules', NAME)
  t.same(fs.readdirSync(path.join(installed, 'dist')).sort(), files.filter((file) => file.startsWith('dist/')).map((file) => file.slice(5)), 'npm installed what it packed')
  t.notMatch(fs.readFileSync(path.join(CLIENT, 'README.md'), 'utf8'), /\]\((?!https?:)/, 'the README links nothing by a path, which the package would not hold')
})

t.test('npm installs the client\'s dependencies as it declares them: openapi-fetch in its range, from the registry', async (t) => {
  const lock = readJson<{ packages: Record<string, { version: string, resolved?: string, dependencies?: Record<string, string> }> }>(path.join(app, 'package-lock.json'))
  t.same(lock.packages[`node_modules/${NAME}`]?.dependencies, clientPackage.dependencies, 'what the tarball\'s package.json declares')
  const fetched = lock.packages['node_modules/openapi-fetch']
  t.equal(fetched?.version, readJson<PackageJson>(path.join(projectRoot, 'node_modules', 'openapi-fetch', 'package.json')).version, 'the repository\'s openapi-fetch')
  t.equal(fetched?.resolved, `${registry.url}/-/${packed.find((entry) => entry.name === 'openapi-fetch')?.filename}`, 'through the registry')
  t.ok(registry.asked.includes('/openapi-fetch') && registry.asked.includes('/openapi-typescript-helpers'), 'which npm asked for it and for its dependency')
  const ran = await run(process.execPath, ['--input-type=module', '-e', `import document from '${NAME}/openapi.json' with { type: 'json' }; console.log(document.info.title)`], app)
  t.same(ran, { code: 0, stdout: 'servant-example-api\n', stderr: '' }, `${NAME}/openapi.json is the document`)
})

t.test('the strict browser project compiles with TypeScript 7: the examples and the fixtures, whose expected errors are errors', async (t) => {
  t.ok(docsExamples.length > 0, 'docs/client.md has examples')
  t.ok(readmeExamples.length > 0, 'client/README.md has one')
  const fixtures = fs.readdirSync(FIXTURES)
  t.ok(fixtures.length > 0 && fixtures.every((name) => /@ts-expect-error/.test(fs.readFileSync(path.join(FIXTURES, name), 'utf8'))), 'each fixture expects errors')
  t.ok(fixtures.every((name) => fs.readFileSync(path.join(FIXTURES, name), 'utf8').includes(`from '${NAME}'`)), 'each imports the package by its name')
  t.match((await run(process.execPath, [TSC, '--version'], app)).stdout, /^Version 7\./, 'TypeScript 7')
  t.same((await compiled.NodeNext).filter((line) => !line.startsWith('probe/')), [], '0 diagnostics (NodeNext modules)')
  t.same(await compiled.Bundler, [], '0 diagnostics (Bundler modules)')
})

t.test('TypeScript 5.9 compiles the same project: the examples and the fixtures, whose expected errors are errors', async (t) => {
  t.match((await run(process.execPath, [COMPILERS[5.9], '--version'], app)).stdout, /^Version 5\.9\./, 'TypeScript 5.9')
  t.same((await compiled.NodeNext59).filter((line) => !line.startsWith('probe/')), [], '0 diagnostics (NodeNext modules)')
  t.same(await compiled.Bundler59, [], '0 diagnostics (Bundler modules)')
})

t.test('the project is strict and has no Node: a Buffer, a missing null check, a @ts-expect-error without error fail it', async (t) => {
  for (const version of ['NodeNext', 'NodeNext59'] as const) {
    t.same(probed(await compiled[version]).codes.filter((line) => line.startsWith('probe/probe.ts')), [
      'probe/probe.ts:2: TS2591', // Cannot find name 'Buffer'
      'probe/probe.ts:3: TS18048', // 'list' is possibly 'undefined'
      'probe/probe.ts:4: TS2578' // Unused '@ts-expect-error' directive
    ], version)
  }
})

t.test('a call that needs credentials the client was not given does not compile, and the message names them (TypeScript 7 and 5.9)', async (t) => {
  for (const version of ['NodeNext', 'NodeNext59'] as const) {
    const { codes, messages } = probed((await compiled[version]).filter((line) => line.startsWith('probe/credentials.ts')))
    t.same(codes, [3, 4, 5, 6].map((line) => `probe/credentials.ts:${line}: TS2345`), `${version}: one error a call, on its path`)
    t.same(messages.map((message) => [NEEDS_BASIC, NEEDS_BEARER].find((needs) => message.includes(needs))), [NEEDS_BASIC, NEEDS_BASIC, NEEDS_BEARER, NEEDS_BASIC], `${version}: ${messages.join(' | ')}`)
  }
})

t.test('the examples, compiled, run on Node 24 against the service', async (t) => {
  await compiled.NodeNext
  const server = await serverStarted
  for (const { name, text } of examples) {
    t.ok(text.includes(EXAMPLE_URL), `${name} calls the service at ${EXAMPLE_URL}, here its test port`)
    const file = path.join(app, 'out', `${name}.js`)
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replaceAll('__SERVICE_URL__', server.url))
    const before = server.logs.filter((entry) => entry.msg === 'request completed').length
    const ran = await run(process.execPath, [file], app)
    t.same({ code: ran.code, stderr: ran.stderr }, { code: 0, stderr: '' }, `${name} exits 0`)
    // A request's line reaches stdout within FLUSH_MS of its answer (docs/operations.md, Logs).
    await until(() => server.logs.filter((entry) => entry.msg === 'request completed').length > before)
    t.pass(`${name} called the service`)
  }
})

t.test('the program of the browser test, on Node with the packed client: pages, headers, an error of each kind, a cancelled stream', async (t) => {
  await compiled.NodeNext
  const server = await serverStarted
  // Nothing listens on a port just closed; a server that accepts and never answers.
  const closed = http.createServer()
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
  const refusing = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`
  await new Promise((resolve) => closed.close(resolve))
  const silent = http.createServer(() => {})
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
  t.teardown(() => silent.close())
  t.teardown(() => silent.closeAllConnections())
  const runner = path.join(app, 'out', 'program', 'main.mjs')
  fs.writeFileSync(runner, "import { run } from './program.js'\nconsole.log(JSON.stringify(await run(JSON.parse(process.argv[2]))))\n")
  const urls = { service: server.url, refusing, silent: `http://127.0.0.1:${(silent.address() as AddressInfo).port}` }
  const ran = await run(process.execPath, [runner, JSON.stringify(urls)], app)
  t.same({ code: ran.code, stderr: ran.stderr }, { code: 0, stderr: '' }, 'it exits 0')
  const report = JSON.parse(ran.stdout) as { passed: string[], failed: string[] }
  t.same(report.failed, [], 'no check failed')
  t.equal(report.passed.length, 10, `every check passed: ${report.passed.join('; ')}`)
})

t.test('what a server asks and what a proxy may answer, on Node with the packed client: Retry-After read, a retry after it, a POST sent once, a header that does not decode', async (t) => {
  await compiled.NodeNext
  // GET /hello: 503 with Retry-After: 1 twice (the call without retry, then the first try of the
  // call with), then its success; POST /users: always 503; GET /albert: X-An-Int that is no integer.
  const asked: string[] = []
  const server = http.createServer((req, res) => {
    const request = `${req.method} ${req.url}`
    asked.push(request)
    req.resume()
    const unavailable = () => res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' }).end('{"statusCode":503,"error":"Service Unavailable","message":"retry later"}')
    if (request === 'GET /hello') {
      if (asked.filter((each) => each === request).length <= 2) unavailable()
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{"msg":"Hello, servant"}')
    } else if (request === 'POST /users') {
      unavailable()
    } else {
      res.writeHead(200, { 'content-type': 'application/json', 'x-an-int': 'abc', 'x-a-bool': 'true' }).end('{"name":"Albert Einstein","age":136,"email":"ae@mc2.org","registration_date":"1905-12-01"}')
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  const runner = path.join(app, 'out', 'program', 'answers-main.mjs')
  fs.writeFileSync(runner, "import { answers } from './answers.js'\nconsole.log(JSON.stringify(await answers(process.argv[2])))\n")
  const ran = await run(process.execPath, [runner, `http://127.0.0.1:${(server.address() as AddressInfo).port}`], app)
  t.same({ code: ran.code, stderr: ran.stderr }, { code: 0, stderr: '' }, 'it exits 0')
  const report = JSON.parse(ran.stdout) as { passed: string[], failed: string[] }
  t.same(report.failed, [], 'no check failed')
  t.equal(report.passed.length, 4, `every check passed: ${report.passed.join('; ')}`)
  t.same(asked, ['GET /hello', 'GET /hello', 'GET /hello', 'POST /users', 'GET /albert'], 'GET /hello sent again after its 503, POST /users once')
})

t.test('what the package is built from imports nothing outside client/ but openapi-fetch, and needs no generator', async (t) => {
  for (const name of fs.readdirSync(CLIENT).filter((file) => file.endsWith('.ts'))) {
    const { importedFiles, referencedFiles, typeReferenceDirectives } = ts.preProcessFile(fs.readFileSync(path.join(CLIENT, name), 'utf8'), true, true)
    const outside = importedFiles.map((file) => file.fileName)
      .filter((specifier) => specifier !== 'openapi-fetch' && !(specifier.startsWith('./') && !specifier.includes('/', 2)))
    t.same([...outside, ...referencedFiles, ...typeReferenceDirectives], [], `client/${name}`)
  }
})

t.test('client/dist is a build output: git, Docker\'s context and ESLint leave it out', async (t) => {
  const built = path.join('client', 'dist', 'index.js')
  t.ok(fs.existsSync(path.join(projectRoot, built)), 'npm pack built it')
  // git with the test's environment: its settings (a safe.directory) are the user's.
  const ignored = await run('git', ['check-ignore', '--quiet', built], projectRoot, process.env)
  t.equal(ignored.code, 0, 'git ignores it')
  const dockerignore = fs.readFileSync(path.join(projectRoot, '.dockerignore'), 'utf8').split('\n').map((line) => line.trim())
  t.ok(dockerignore.some((line) => /^\/?client\/dist\/?$/.test(line)), '.dockerignore leaves it out of the image\'s context')
  // The patterns of eslint.config.js, matched as ESLint does, from the project's root (loading
  // the config itself, neostandard's plugins, takes seconds).
  const eslintConfig = fs.readFileSync(path.join(projectRoot, 'eslint.config.js'), 'utf8')
  const ignores = [...(/ignores: \[([^\]]*)\]/.exec(eslintConfig)?.[1] ?? '').matchAll(/'([^']+)'/g)].map((match) => match[1] as string)
  t.ok(ignores.includes('dist/**'), 'the patterns are read')
  t.ok(ignores.some((pattern) => path.matchesGlob(built, pattern)), 'ESLint ignores it')
})
