// Swagger UI at /documentation in headless Chromium (Debian's), under the service's real headers:
// the page renders, nothing breaks the Content-Security-Policy, and "Try it out" on GET /hello
// gets a 200. Then the same page behind a proxy that strips a path prefix (BASE_PATH=/api): it
// renders with every asset loaded. Run by `npm run test:system` (test/system/browser.test.ts) and
// `npm run test:browser`, which build the service first; it needs /usr/bin/chromium. Exits
// non-zero on the first failure.
import http from 'node:http'
import { check, launchChromium, report, startService, TIMEOUT_MS } from './harness.js'

/** A reverse proxy on a free port serving `target` under `prefix`, which it strips (nginx's `location /api/ { proxy_pass http://app/; }`). */
function startPrefixProxy (target, prefix) {
  const server = http.createServer((req, res) => {
    if (!req.url.startsWith(`${prefix}/`)) {
      res.writeHead(404).end()
      return
    }
    const upstream = http.request(`${target}${req.url.slice(prefix.length)}`, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode, answer.headers)
      answer.pipe(res)
    })
    upstream.on('error', () => res.writeHead(502).end())
    req.pipe(upstream)
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => {
    resolve({ url: `http://127.0.0.1:${server.address().port}`, stop: () => server.close() })
  }))
}

/**
 * Opens `url` in a new page and waits for Swagger UI to render the API's title. Collects what
 * goes wrong on the way: console errors, CSP violations, page errors, failed requests, 4xx/5xx.
 */
async function openSwaggerUi (browser, url) {
  const page = await browser.newPage()
  const problems = []
  page.on('console', (message) => { if (message.type() === 'error') problems.push(`console: ${message.text()}`) })
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`))
  page.on('requestfailed', (request) => problems.push(`request failed: ${request.url()} ${request.failure()?.errorText}`))
  page.on('response', (response) => { if (response.status() >= 400) problems.push(`${response.status()}: ${response.url()}`) })
  await page.addInitScript(() => {
    window.cspViolations = []
    document.addEventListener('securitypolicyviolation', (event) => {
      window.cspViolations.push(`${event.violatedDirective} blocked ${event.blockedURI || 'inline'}`)
    })
  })
  await page.goto(url, { waitUntil: 'load', timeout: TIMEOUT_MS })
  await page.locator('.swagger-ui .info .title', { hasText: 'servant-example-api' }).waitFor({ timeout: TIMEOUT_MS })
  await page.locator('.opblock-summary-path[data-path="/hello"]').waitFor({ timeout: TIMEOUT_MS })
  const violations = await page.evaluate(() => window.cspViolations)
  return { page, problems: [...problems, ...violations.map((violation) => `CSP: ${violation}`)] }
}

const service = await startService()
const prefixed = await startService({ BASE_PATH: '/api' })
const proxy = await startPrefixProxy(prefixed.url, '/api')
const browser = await launchChromium()
try {
  console.log(`# Chromium ${browser.version()}, Swagger UI at ${service.url}/documentation`)
  const { page, problems } = await openSwaggerUi(browser, `${service.url}/documentation`)
  check(true, 'the page renders the API\'s title and its operations')
  const csp = await page.evaluate(async () => (await fetch(window.location.href)).headers.get('content-security-policy'))
  check(typeof csp === 'string' && csp.includes("script-src 'self'"), `served with a Content-Security-Policy: ${csp}`)

  await page.locator('.opblock-summary-path[data-path="/hello"]').click()
  const operation = page.locator('.opblock', { has: page.locator('.opblock-summary-path[data-path="/hello"]') })
  await operation.locator('button.try-out__btn').click()
  await operation.locator('button.execute').click()
  const status = operation.locator('.live-responses-table .response .response-col_status').first()
  await status.waitFor({ timeout: TIMEOUT_MS })
  const shown = (await status.innerText()).trim()
  check(shown === '200', `"Try it out" on GET /hello shows ${shown}`)
  const body = (await operation.locator('.live-responses-table .response-col_description pre').first().innerText()).trim()
  check(body.includes('"msg": "Hello, '), `and the answer: ${body.replace(/\s+/g, ' ')}`)
  check(problems.length === 0, `no CSP violation, console error or failed request${problems.length === 0 ? '' : `: ${problems.join('; ')}`}`)

  console.log(`# behind a proxy that strips /api (BASE_PATH=/api): ${proxy.url}/api/documentation`)
  const behind = await openSwaggerUi(browser, `${proxy.url}/api/documentation`)
  const assets = await behind.page.evaluate(() => performance.getEntriesByType('resource').map((entry) => new URL(entry.name).pathname))
  check(assets.some((asset) => asset === '/api/documentation/static/swagger-ui-bundle.js') && assets.includes('/api/documentation/json'),
    'the page renders, its assets and the document loaded under /api (its ./json sent on to /api/openapi.json)')
  check(behind.problems.length === 0, `no CSP violation, console error or failed request${behind.problems.length === 0 ? '' : `: ${behind.problems.join('; ')}`}`)
} catch (err) {
  check(false, err.stack)
} finally {
  await browser.close()
  proxy.stop()
  prefixed.stop()
  service.stop()
}
report()
