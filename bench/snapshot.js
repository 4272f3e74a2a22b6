// A V8 startup snapshot of the service, for cold-start.bench.js to start beside the bundle through
// the code cache: the heap of a process that has loaded every module of the bundle (the plugins
// and routes autoload finds included), from which `node --snapshot-blob <blob>` starts the
// service instead of loading them. It was tried as the production start and was slower than the
// code cache (docs/build.md, "The startup snapshot"); it stays here so that the comparison can be
// made again on another Node. It is built from dist/ (npm run build's output) into
// dist/bench-snapshot/, and runs only in the tree it was built in: its modules hold
// dist/bundle's path, where app.js finds plugins/ and routes/.
//
// Only a start time is measured from it, so it keeps what the modules take when they load at
// build time, which a snapshot the service ran from could not: pino's pid and hostname (every log
// line names the builder's process), the request ids' random part (lib/request-id.ts: the same in
// every process started from one blob), the `debug` package's DEBUG. Reading them at run time
// costs next to nothing. prom-client, whose process start time would be the build's, is loaded
// at run time as such a snapshot would have to, since that costs the start some time.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { compressChecks, SERVICE_BUNDLE_OPTIONS, swaggerUiAssets } from '../scripts/bundle-plugins.ts'

const root = path.resolve(import.meta.dirname, '..')
const dist = path.join(root, 'dist')
const bundleDir = path.join(dist, 'bundle')
const workdir = path.join(dist, 'bench-snapshot')
const serviceFile = path.join(bundleDir, 'service.cjs')

/**
 * Modules the snapshot must not hold, loaded at run time from node_modules:
 * - node:http, node:https, node:http2: loading node:http makes the snapshot builder abort (its
 *   HTTP parser binding keeps a handle V8 cannot serialise: "global handle not serialized",
 *   Node 24.21). Fastify reads only `STATUS_CODES` of them while modules load (its error
 *   handler): the builder's own table, which is data.
 * - prom-client: its process start time is computed when its module loads.
 * - the database driver, loaded only with DATABASE_URL, as from service.cjs; pino-pretty, never
 *   in production.
 */
const DEFERRED = ['node:http', 'node:https', 'node:http2', 'prom-client']
const EXTERNAL = ['prom-client', 'pg', 'pg-native', '@fastify/postgres', 'pino-pretty']
/** Built-in modules the bundle requires without their `node:` prefix. */
const UNPREFIXED = ['http', 'https', 'http2']

/**
 * The modules autoload loads, as scripts/bundle.js listed them: each has a file under
 * dist/bundle/plugins/ or routes/ (`plugins/x.cjs` for dist/plugins/x.js).
 */
function autoloaded () {
  return ['plugins', 'routes'].flatMap((dir) => fs.readdirSync(path.join(bundleDir, dir), { recursive: true })
    .filter((file) => file.endsWith('.cjs'))
    .map((file) => path.join(dir, file).split(path.sep).join('/').replace(/\.cjs$/, '.js')))
}

/**
 * Builds dist/bench-snapshot/snapshot.blob with the Node running this, from dist/ as
 * npm run build left it, and returns its path. Throws with the builder's output if it fails.
 */
export async function buildSnapshot () {
  if (!fs.existsSync(serviceFile)) throw new Error(`${path.relative(root, serviceFile)} is missing: npm run build first`)
  fs.rmSync(workdir, { recursive: true, force: true })
  // The builder runs one CommonJS script that may require built-in modules only: the service is
  // bundled once more, from service.cjs's entry with service.cjs's options (scripts/bundle.js),
  // pino and thread-stream inside.
  const bundle = path.join(workdir, 'service.cjs')
  await build({
    ...SERVICE_BUNDLE_OPTIONS,
    format: 'cjs',
    stdin: {
      contents: [
        `export { start } from ${JSON.stringify(path.join(dist, 'service.js'))}`,
        `export { mapBundleStacks } from ${JSON.stringify(path.join(dist, 'lib', 'bundle-stack.js'))}`,
        `export { holdNextTickShape } from ${JSON.stringify(path.join(dist, 'lib', 'next-tick-shape.js'))}`,
        'export const modules = {',
        ...autoloaded().map((name) => `  ${JSON.stringify(name)}: () => require(${JSON.stringify(path.join(dist, name))}),`),
        '}'
      ].join('\n'),
      resolveDir: dist,
      sourcefile: 'bundle-main.js'
    },
    outfile: bundle,
    define: { 'import.meta.dirname': '__dirname' },
    logOverride: { 'require-resolve-not-external': 'silent' },
    plugins: [compressChecks, swaggerUiAssets(path.dirname(fileURLToPath(import.meta.resolve('@fastify/swagger-ui'))))],
    external: EXTERNAL
  })

  const require = createRequire(serviceFile)
  const entry = path.join(workdir, 'entry.cjs')
  fs.writeFileSync(entry, entryScript({
    code: fs.readFileSync(bundle, 'utf8').replace(/\n\/\/# sourceMappingURL=.*\n?$/, '\n'),
    names: Object.fromEntries(DEFERRED.map((id) => [id, Object.keys(require(id))])),
    statusCodes: require('node:http').STATUS_CODES,
    entry,
    map: `${bundle}.map`
  }))

  const blob = path.join(workdir, 'snapshot.blob')
  // Nothing of this process's environment reaches the modules that load: only PATH.
  const built = spawnSync(process.execPath, ['--snapshot-blob', blob, '--build-snapshot', entry], {
    env: { PATH: process.env.PATH },
    encoding: 'utf8'
  })
  if (built.status !== 0) {
    throw new Error(`The startup snapshot could not be built (exit ${built.status ?? built.signal}):\n${built.stderr.slice(0, 4000)}`)
  }
  return blob
}

/**
 * The snapshot builder's script. Line 1 is the bundle as Node wraps a CommonJS module, so that
 * lib/bundle-stack.ts maps its frames as it maps service.cjs's; what it calls is hoisted below.
 */
function entryScript ({ code, names, statusCodes, entry, map }) {
  const wrapper = '(function (exports, require, module, __filename, __dirname) { '
  return `${wrapper}${code}
})(...bundleArguments())

// Everything the bundle defines, the routes and plugins autoload will load included: loaded here,
// started after deserialisation.
for (const load of Object.values(bundleModule.exports.modules)) load()

require('node:v8').startupSnapshot.setDeserializeMainFunction(main)

var bundleModule
var building
var runtimeRequire
var deferred

function bundleArguments () {
  building = true
  bundleModule = { exports: {} }
  deferred = deferredModules()
  // swagger-ui finds its assets through it (scripts/bundle-plugins.ts), at run time.
  bundleRequire.resolve = (id, options) => runtimeRequire.resolve(id, options)
  return [bundleModule.exports, bundleRequire, bundleModule, ${JSON.stringify(serviceFile)}, ${JSON.stringify(bundleDir)}]
}

/** The bundle's require: built-in modules while the snapshot is built, and the deferred ones. */
function bundleRequire (id) {
  return deferred[id] ?? (building ? require(id) : runtimeRequire(id))
}

/** An object per deferred module with its export names, each read from the module at run time. */
function deferredModules () {
  const names = ${JSON.stringify(names)}
  const STATUS_CODES = ${JSON.stringify(statusCodes)}
  const modules = {}
  for (const [id, keys] of Object.entries(names)) {
    const stand = {}
    let real
    for (const key of keys) {
      Object.defineProperty(stand, key, {
        enumerable: true,
        get () {
          if (!building) return (real ??= runtimeRequire(id))[key]
          if (id === 'node:http' && key === 'STATUS_CODES') return STATUS_CODES
          throw new Error(\`\${id} (its \${key}) is used while the snapshot is built: it must be read at run time\`)
        }
      })
    }
    modules[id] = stand
  }
  for (const id of ${JSON.stringify(UNPREFIXED)}) modules[id] = modules[\`node:\${id}\`]
  return modules
}

/** After deserialisation: the service as server.js starts it, from the snapshot's modules. */
function main () {
  const service = bundleModule.exports
  service.holdNextTickShape()
  building = false
  const Module = require('node:module')
  const file = ${JSON.stringify(serviceFile)}
  runtimeRequire = Module.createRequire(file)
  // The files autoload requires take their modules from service.cjs: this snapshot's are those.
  const module = new Module(file)
  module.filename = file
  module.exports = service
  module.loaded = true
  runtimeRequire.cache[file] = module
  // Node's module compile cache, for the modules loaded from node_modules (prom-client), as server.js.
  if (process.env.NODE_DISABLE_COMPILE_CACHE === undefined) {
    Module.enableCompileCache?.(process.env.NODE_COMPILE_CACHE ?? ${JSON.stringify(path.join(bundleDir, '.compile-cache'))})
  }
  // Its frames name the builder's script (line 1 is the bundle): mapped to the sources.
  service.mapBundleStacks(${JSON.stringify(entry)}, ${JSON.stringify(map)})
  return service.start()
}
`
}
