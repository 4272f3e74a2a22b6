import fs from 'node:fs'
import path from 'node:path'
import type { BuildOptions, Plugin } from 'esbuild'

// The changes the production bundle (scripts/bundle.js) makes to the code of its dependencies. Each
// checks that the code it changes is what it expects, and fails the build when it is not: a new
// version of the dependency must be looked at, never patched blindly. test/scripts/ holds them to
// the installed versions and to sources they must refuse. (Node runs this file as it is.)

/** Replaces each `from` of `changes` in `source` (once each); throws when one is not there exactly once. */
export function rewrite (file: string, source: string, changes: Readonly<Record<string, string>>): string {
  let result = source
  for (const [from, to] of Object.entries(changes)) {
    const found = result.split(from).length - 1
    if (found !== 1) throw new Error(`${file}: "${from}" found ${found} times where the build expects it once; see scripts/bundle-plugins.ts`)
    result = result.replace(from, to)
  }
  return result
}

/**
 * @fastify/compress asks each payload `instanceof Response` and `instanceof ReadableStream`:
 * reading those globals the first time loads Node's bundled undici, which delays the first
 * response (figures: bench/README.md) where a bare Fastify app does not. The same questions asked as Fastify's
 * reply.send asks them (lib/reply.js) load nothing.
 */
export const COMPRESS_CHECKS: Readonly<Record<string, string>> = {
  'return obj instanceof ReadableStream': "return obj !== null && typeof obj === 'object' && typeof obj.getReader === 'function'",
  'return obj instanceof Response': "return obj !== null && typeof obj === 'object' && Object.prototype.toString.call(obj) === '[object Response]'"
}

export const compressChecks: Plugin = {
  name: 'compress-checks-like-fastify',
  setup (build) {
    build.onLoad({ filter: /[\\/]@fastify[\\/]compress[\\/]lib[\\/]utils\.js$/ }, async (args) =>
      ({ contents: rewrite(args.path, await fs.promises.readFile(args.path, 'utf8'), COMPRESS_CHECKS), loader: 'js' }))
  }
}

/**
 * @fastify/swagger-ui reads its assets relative to `__dirname`, which in the bundle is the
 * bundle's directory: each of these uses, and no other, becomes the installed package's directory,
 * resolved when the bundle runs. Keyed by the module's path in the package.
 */
export const SWAGGER_UI_DIRNAMES: Readonly<Record<string, readonly string[]>> = {
  'index.js': ["path.join(__dirname, './static/logo.svg')"],
  'lib/routes.js': ["path.join(__dirname, '..', 'static')"]
}

/** A module of @fastify/swagger-ui (`name`, its path in the package) with its `__dirname` uses made the package's. */
export function swaggerUiSource (name: string, source: string): string {
  const expected = SWAGGER_UI_DIRNAMES[name] ?? []
  const found = source.split('__dirname').length - 1
  if (found !== expected.length) {
    throw new Error(`@fastify/swagger-ui/${name}: __dirname used ${found} times where the build expects ${expected.length}; see scripts/bundle-plugins.ts`)
  }
  const below = JSON.stringify(path.posix.dirname(name))
  const dirname = `require('node:path').join(require('node:path').dirname(require.resolve('@fastify/swagger-ui')), ${below})`
  return rewrite(`@fastify/swagger-ui/${name}`, source, Object.fromEntries(expected.map((use) => [use, use.replace('__dirname', dirname)])))
}

export function swaggerUiAssets (packageDirectory: string): Plugin {
  return {
    name: 'swagger-ui-assets',
    setup (build) {
      build.onLoad({ filter: /\.js$/ }, async (args) => {
        if (!args.path.startsWith(packageDirectory + path.sep)) return undefined
        const name = path.relative(packageDirectory, args.path).split(path.sep).join('/')
        const source = await fs.promises.readFile(args.path, 'utf8')
        return { contents: swaggerUiSource(name, source), loader: 'js', resolveDir: path.dirname(args.path) }
      })
    }
  }
}

/**
 * The esbuild options of the service's bundle (scripts/bundle.js), which bench/snapshot.js bundles
 * again for its snapshot.
 */
export const SERVICE_BUNDLE_OPTIONS = {
  bundle: true,
  platform: 'node',
  target: 'node24',
  logLevel: 'warning',
  // V8 parses all of it before it runs: without the whitespace the start is shorter (figures:
  // bench/README.md). Names are kept, so stack traces still name the functions; the source maps
  // beside the files give the lines (NODE_OPTIONS=--enable-source-maps).
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: 'linked'
} satisfies BuildOptions
