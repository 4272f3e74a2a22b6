// The production build: dist/ (tsc's output, one file per module) bundled by esbuild into
// dist/bundle/, which `npm start` and the Docker image run. Loading some 600 modules one by one was
// about a fifth of the cold start; the bundle loads a few dozen files.
//
// The tree stays the same shape: the programs, app.js and every file @fastify/autoload loads from
// plugins/ and routes/ are entries, each at its own place under dist/bundle/, because autoload reads
// those directories beside app.js at start-up; the rest of the code goes to dist/bundle/chunks/.
// Packages that start worker threads from files beside their own code (pino's transports) or load
// optional drivers (pg, postgrator) stay in node_modules. @fastify/swagger-ui is bundled (kept
// apart, it loaded a second @fastify/static and the 80 files of `yaml` one by one: about 110 ms of
// the start), and finds its assets in its package directory, which the bundle resolves at run time.
// dist/ itself is left as it is, for `fastify start`.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const dist = path.join(import.meta.dirname, '..', 'dist')
const outdir = path.join(dist, 'bundle')
const SWAGGER_UI = path.dirname(fileURLToPath(import.meta.resolve('@fastify/swagger-ui')))
const EXTERNAL = [
  'pino', 'thread-stream', 'pino-pretty',
  'pg', 'pg-native', '@fastify/postgres', 'postgrator'
]

/**
 * The files @fastify/autoload loads from a directory: its index.js alone when it has one, else
 * every module; and the same in each subdirectory. The other modules are only imported, so they
 * live in the chunks: fewer entries make fewer chunks for Node to load.
 */
function autoloaded (dir) {
  const found = fs.readdirSync(dir, { withFileTypes: true })
  const modules = found.filter((entry) => entry.isFile() && entry.name.endsWith('.js')).map((entry) => entry.name)
  return [
    ...(modules.includes('index.js') ? ['index.js'] : modules).map((name) => path.join(dir, name)),
    ...found.filter((entry) => entry.isDirectory()).flatMap((entry) => autoloaded(path.join(dir, entry.name)))
  ]
}

/** The entry points: the two programs (server.js loads service.js), the app, and what app.js autoloads from plugins/ and routes/. */
const entryPoints = [
  ...['server.js', 'service.js', 'cli.js', 'app.js'].map((name) => path.join(dist, name)),
  // plugins/config.js is registered by app.js itself, not autoloaded.
  ...autoloaded(path.join(dist, 'plugins')).filter((file) => file !== path.join(dist, 'plugins', 'config.js')),
  ...autoloaded(path.join(dist, 'routes'))
]

fs.rmSync(outdir, { recursive: true, force: true })
await build({
  entryPoints,
  outbase: dist,
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  chunkNames: 'chunks/[name]-[hash]',
  external: EXTERNAL,
  // CommonJS packages bundled into ESM still call require() for Node's own modules.
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  logLevel: 'warning',
  // V8 parses every chunk before it runs: without the whitespace (a third of the bytes) the start
  // was about 90 ms shorter. Names are kept, so stack traces still name the functions; the source
  // maps beside the files give the lines (NODE_OPTIONS=--enable-source-maps).
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: 'linked',
  plugins: [{
    name: 'app-stays-a-file',
    setup (build) {
      // app.js finds plugins/ and routes/ beside itself (import.meta.dirname): server.js and cli.js
      // import it as a file of its own instead of from a chunk.
      build.onResolve({ filter: /^\.\/app\.js$/ }, (args) =>
        path.dirname(args.importer) === dist ? { path: './app.js', external: true } : undefined)
    }
  }, {
    name: 'swagger-ui-assets',
    setup (build) {
      // Its modules read their assets (static/) relative to __dirname, which a bundle has not: the
      // directory becomes the installed package's, resolved when the bundle runs.
      build.onLoad({ filter: /\.js$/ }, async (args) => {
        if (!args.path.startsWith(SWAGGER_UI + path.sep)) return undefined
        const source = await fs.promises.readFile(args.path, 'utf8')
        const below = JSON.stringify(path.relative(SWAGGER_UI, path.dirname(args.path)))
        const dirname = `require('node:path').join(require('node:path').dirname(require.resolve('@fastify/swagger-ui')), ${below})`
        return { contents: source.replaceAll('__dirname', dirname), loader: 'js', resolveDir: path.dirname(args.path) }
      })
    }
  }]
})
