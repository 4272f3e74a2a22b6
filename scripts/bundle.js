// The production build: dist/ (tsc's output, one file per module) bundled by esbuild into
// dist/bundle/, which `npm start` and the Docker image run.
//
// - dist/bundle/service.cjs: the whole service in one CommonJS file, the libraries with it. Loading
//   some 600 modules one by one was about a fifth of the cold start. server.js (server.ts) runs it
//   through V8's code cache, which only a classic script can be given: Node's module compile cache
//   keeps what V8 compiles before a module runs, not the functions it compiles while the service
//   starts.
// - dist/bundle/plugins/, dist/bundle/routes/: the files @fastify/autoload loads, each a line that
//   takes its module from service.cjs. Autoload still reads the tree at start-up (beside app.js,
//   which is in service.cjs, whose directory is dist/bundle): the layout and its prefixes stay the
//   same.
// - dist/bundle/server.js: the entry, server.ts.
//
// Packages that start worker threads from files beside their own code (pino's transports) or load
// optional drivers (pg) stay in node_modules, and so does postgrator, which
// lib/postgres/migrations.ts require()s at run time. So does OpenTelemetry's SDK, which
// lib/tracing.ts require()s only when tracing is on: off, the bundle neither holds nor loads any of
// it; on, instrumentation-pg patches pg through Node's require, which a bundled pg would never pass
// through (@opentelemetry/api alone is in the bundle, prom-client's: the SDK's copy shares its
// state, kept on globalThis).
// @fastify/swagger-ui is bundled and finds its assets in its package directory, which the bundle
// resolves at run time (scripts/bundle-plugins.ts: every change the bundle makes to a dependency's
// code, each checked).
// dist/ itself is left as it is, for `fastify start`.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { compressChecks, SERVICE_BUNDLE_OPTIONS as bundled, swaggerUiAssets } from './bundle-plugins.ts'

const dist = path.join(import.meta.dirname, '..', 'dist')
const outdir = path.join(dist, 'bundle')
const SWAGGER_UI = path.dirname(fileURLToPath(import.meta.resolve('@fastify/swagger-ui')))
const EXTERNAL = [
  'pino', 'thread-stream', 'pino-pretty',
  'pg', 'pg-native', '@fastify/postgres'
]

/**
 * The files @fastify/autoload loads from a directory: its index.js alone when it has one, else
 * every module; and the same in each subdirectory.
 */
function autoloaded (dir) {
  const found = fs.readdirSync(dir, { withFileTypes: true })
  const modules = found.filter((entry) => entry.isFile() && entry.name.endsWith('.js')).map((entry) => entry.name)
  return [
    ...(modules.includes('index.js') ? ['index.js'] : modules).map((name) => path.join(dir, name)),
    ...found.filter((entry) => entry.isDirectory()).flatMap((entry) => autoloaded(path.join(dir, entry.name)))
  ]
}

// plugins/config.js is registered by app.js itself, not autoloaded.
const loaded = [...autoloaded(path.join(dist, 'plugins')), ...autoloaded(path.join(dist, 'routes'))]
  .filter((file) => file !== path.join(dist, 'plugins', 'config.js'))
  .map((file) => path.relative(dist, file).split(path.sep).join('/'))

/** service.cjs exports start() and migrate() and, by path, a loader of each module autoload loads. */
const main = [
  `export { migrate, start } from ${JSON.stringify(path.join(dist, 'service.js'))}`,
  'export const modules = {',
  ...loaded.map((name) => `  ${JSON.stringify(name)}: () => require(${JSON.stringify(path.join(dist, name))}),`),
  '}'
].join('\n')

fs.rmSync(outdir, { recursive: true, force: true })
await build({
  ...bundled,
  stdin: { contents: main, resolveDir: dist, sourcefile: 'bundle-main.js' },
  outfile: path.join(outdir, 'service.cjs'),
  format: 'cjs',
  external: EXTERNAL,
  // A CommonJS file has no import.meta: the modules that ask for their directory (app.js, for the
  // plugins/ and routes/ beside it; plugins/config.js, to find package.json) get the bundle's,
  // dist/bundle, the same place in the tree as dist/.
  define: { 'import.meta.dirname': '__dirname' },
  // swagger-ui's require.resolve (bundle-plugins.ts) finds the installed package on purpose.
  logOverride: { 'require-resolve-not-external': 'silent' },
  plugins: [compressChecks, swaggerUiAssets(SWAGGER_UI)]
})

// What autoload finds: each module, taken from service.cjs (which server.js has loaded by then).
// `name` is a path below dist/ with / between its parts, as is the file's below dist/bundle/.
for (const name of loaded) {
  const file = path.join(outdir, name.replace(/\.js$/, '.cjs'))
  const up = '../'.repeat(name.split('/').length - 1)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, `module.exports = require('${up}service.cjs').modules[${JSON.stringify(name)}]()\n`)
}

// The entry: server.ts, which loads the rest from service.cjs at run time.
await build({
  ...bundled,
  entryPoints: [path.join(dist, 'server.js')],
  outfile: path.join(outdir, 'server.js'),
  format: 'esm',
  external: ['./service.js']
})
