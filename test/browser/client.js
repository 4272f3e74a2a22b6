// The client's program (test/client/program/program.ts, which test/system/client-package.test.ts runs on
// Node) in headless Chromium (Debian's), from another origin than the service's: the page is
// served from one port, the service (CORS_ORIGINS naming the page's origin) from another. Pages,
// decoded headers (those the service exposes to scripts), an error of each kind (the network one
// a CORS refusal: a second service that allows no origin), a cancelled stream. The program is
// bundled by esbuild with the client's sources. Run by `npm run test:system`
// (test/system/browser.test.ts) and `npm run test:browser`; it needs /usr/bin/chromium.
import http from 'node:http'
import path from 'node:path'
import { build } from 'esbuild'
import { check, launchChromium, report, startService, TIMEOUT_MS } from './harness.js'

const root = path.resolve(import.meta.dirname, '..', '..')

const bundled = await build({
  entryPoints: [path.join(root, 'test', 'client', 'program', 'program.ts')],
  alias: { 'servant-example-api-client': path.join(root, 'client', 'index.ts') },
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'chrome116',
  write: false
})
const program = bundled.outputFiles[0].text

/** The page's server: the page, the program, and /silent/…, where requests get no answer. */
const held = new Set()
const pages = http.createServer((req, res) => {
  if (req.url === '/') res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>client</title>')
  else if (req.url === '/program.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(program)
  else if (req.url.startsWith('/silent/')) held.add(res)
  else res.writeHead(404).end()
})
await new Promise((resolve) => pages.listen(0, '127.0.0.1', resolve))
const origin = `http://127.0.0.1:${pages.address().port}`
const service = await startService({ CORS_ORIGINS: origin })
const refusing = await startService()
const browser = await launchChromium()
try {
  // localhost and 127.0.0.1: the service's origin is not the page's even on the same port numbers.
  const urls = { service: service.url.replace('127.0.0.1', 'localhost'), refusing: refusing.url.replace('127.0.0.1', 'localhost'), silent: `${origin}/silent` }
  console.log(`# Chromium ${browser.version()}: the page at ${origin}, the service at ${urls.service}`)
  const page = await browser.newPage()
  await page.goto(`${origin}/`, { waitUntil: 'load', timeout: TIMEOUT_MS })
  const result = await page.evaluate(async (urls) => {
    const { run } = await import('/program.js')
    return await run(urls)
  }, urls)
  for (const passed of result.passed) check(true, passed)
  for (const failed of result.failed) check(false, failed)
  check(result.passed.length === 10 && result.failed.length === 0, `every check of the program ran (${result.passed.length + result.failed.length} of 10)`)
} catch (err) {
  check(false, err.stack)
} finally {
  await browser.close()
  for (const res of held) res.destroy()
  pages.close()
  refusing.stop()
  service.stop()
}
report()
