import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { COMPRESS_CHECKS, SWAGGER_UI_DIRNAMES, compressChecks, rewrite, swaggerUiAssets, swaggerUiSource } from '../../scripts/bundle-plugins.js'

const COMPRESS_UTILS = fileURLToPath(new URL('lib/utils.js', import.meta.resolve('@fastify/compress')))
const SWAGGER_UI = path.dirname(fileURLToPath(import.meta.resolve('@fastify/swagger-ui')))

t.test('@fastify/compress as installed: each check the bundle changes is there, once', async (t) => {
  const source = fs.readFileSync(COMPRESS_UTILS, 'utf8')
  const changed = rewrite(COMPRESS_UTILS, source, COMPRESS_CHECKS)
  t.notMatch(changed, /instanceof (ReadableStream|Response)\b/, 'no global is read')
  for (const to of Object.values(COMPRESS_CHECKS)) t.ok(changed.includes(to))
})

t.test('@fastify/compress changed: the build fails and says where', async (t) => {
  const source = fs.readFileSync(COMPRESS_UTILS, 'utf8')
  t.throws(() => rewrite(COMPRESS_UTILS, source.replace('return obj instanceof Response', 'return isResponse(obj)'), COMPRESS_CHECKS),
    /utils\.js: "return obj instanceof Response" found 0 times where the build expects it once; see scripts\/bundle-plugins\.ts/)
  t.throws(() => rewrite('x.js', 'return obj instanceof Response\nreturn obj instanceof Response', { 'return obj instanceof Response': 'y' }), /found 2 times/)
})

t.test('@fastify/swagger-ui as installed: every __dirname is one the bundle knows, and becomes the package\'s', async (t) => {
  const modules = fs.readdirSync(SWAGGER_UI, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.js') && !name.startsWith('node_modules') && !name.startsWith('static') && !name.startsWith('test') && !name.startsWith('examples'))
    .map((name) => name.split(path.sep).join('/'))
  const using = modules.filter((name) => fs.readFileSync(path.join(SWAGGER_UI, name), 'utf8').includes('__dirname'))
  t.same(using.sort(), Object.keys(SWAGGER_UI_DIRNAMES).sort(), 'the modules that use __dirname')
  for (const name of using) {
    const changed = swaggerUiSource(name, fs.readFileSync(path.join(SWAGGER_UI, name), 'utf8'))
    t.notMatch(changed, /(?<!\w)__dirname(?!\w)/, `${name}: no __dirname left`)
    t.match(changed, "require('node:path').dirname(require.resolve('@fastify/swagger-ui'))", `${name}: the package's directory`)
  }
})

t.test('@fastify/swagger-ui changed: the build fails and says where', async (t) => {
  t.throws(() => swaggerUiSource('lib/routes.js', "root: path.join(__dirname, '..', 'static'),\nother: __dirname"),
    /@fastify\/swagger-ui\/lib\/routes\.js: __dirname used 2 times where the build expects 1/)
  t.throws(() => swaggerUiSource('lib/routes.js', "root: path.join(__dirname, '..', 'assets'),"),
    /"path\.join\(__dirname, '\.\.', 'static'\)" found 0 times/)
  t.throws(() => swaggerUiSource('lib/new.js', 'const here = __dirname'), /lib\/new\.js: __dirname used 1 times where the build expects 0/)
})

t.test('the esbuild plugins make those changes as the bundle is built', async (t) => {
  const { build } = await import('esbuild')
  const bundled = await build({
    stdin: { contents: "require('@fastify/compress/lib/utils.js'); require('@fastify/swagger-ui/lib/routes.js')", resolveDir: path.dirname(SWAGGER_UI) },
    bundle: true,
    platform: 'node',
    write: false,
    logLevel: 'silent',
    external: ['@fastify/static', 'yaml', 'rfdc', 'fastify-plugin', 'minipass', 'peek-stream', 'pumpify', 'readable-stream', 'mime-db', 'duplexify', 'pump'],
    logOverride: { 'require-resolve-not-external': 'silent' },
    plugins: [compressChecks, swaggerUiAssets(SWAGGER_UI)]
  })
  const text = bundled.outputFiles[0]!.text
  t.match(text, /typeof obj\.getReader === ["']function["']/, 'compress: the changed check')
  t.notMatch(text, /instanceof ReadableStream/)
  t.match(text, /require\(["']node:path["']\)\.dirname\(require\.resolve\(["']@fastify\/swagger-ui["']\)\)/, 'swagger-ui: the package\'s directory')
})
