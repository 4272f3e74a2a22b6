import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import YAML from 'yaml'
import { projectRoot } from '../../lib/project-root.js'
import { build, startServer, testDatabase, until } from '../helpers/index.js'
import { freePort } from '../helpers/postgres-server.js'

// deploy/prometheus/ (the rules, their promtool tests, the example config) and
// deploy/grafana/dashboard.json, checked first as files, then against the real thing: Debian's
// prometheus scraping the service on PostgreSQL, every rule and every panel's query evaluated by
// it. Without /usr/bin/prometheus (`apt-get install prometheus`) those parts skip, saying so,
// and with PROMETHEUS_REQUIRED=1 (.ci/run installs it and runs npm test so) a Prometheus that
// is not where it is looked for fails the file as well.

const PROMETHEUS = '/usr/bin/prometheus'
const PROMTOOL = '/usr/bin/promtool'
const installed = fs.existsSync(PROMETHEUS) && fs.existsSync(PROMTOOL)
const missing = `${PROMETHEUS} and ${PROMTOOL} are not installed (Debian: apt-get install --no-install-recommends prometheus)`
const required = process.env.PROMETHEUS_REQUIRED === '1'
const skip = installed ? false : missing

if (required) t.ok(installed, missing)

const directory = path.join(projectRoot, 'deploy', 'prometheus')
const rulesFile = path.join(directory, 'alerts.yaml')
const rulesTestFile = path.join(directory, 'alerts.test.yaml')
const configFile = path.join(directory, 'prometheus.yml')
const dashboardFile = path.join(projectRoot, 'deploy', 'grafana', 'dashboard.json')
const operations = fs.readFileSync(path.join(projectRoot, 'docs', 'operations.md'), 'utf8')

interface Rule { alert?: string, record?: string, expr: string, for?: string, labels?: Record<string, string>, annotations?: Record<string, string> }
const rules = (YAML.parse(fs.readFileSync(rulesFile, 'utf8')) as { groups: Array<{ rules: Rule[] }> }).groups.flatMap((group) => group.rules)
const alerts = rules.filter((rule) => rule.alert !== undefined)
const records = new Set(rules.flatMap((rule) => rule.record ?? []))

interface Target { expr: string, refId: string, instant?: boolean, datasource?: { uid?: string } }
interface Panel { type: string, title: string, id: number, gridPos: { x: number, y: number, w: number, h: number }, datasource?: { type?: string, uid?: string }, targets?: Target[] }
interface Variable { name: string, type: string, query: string | { query: string }, allValue?: string }
const dashboard = JSON.parse(fs.readFileSync(dashboardFile, 'utf8')) as {
  schemaVersion: number
  panels: Panel[]
  templating: { list: Variable[] }
  annotations: { list: Array<{ expr?: string, datasource?: { uid?: string } }> }
}
const queried = dashboard.panels.filter((panel) => panel.type !== 'row')

/** The job the rules select, and the example config's scrape job. */
const JOB = 'servant-example-api'

/** What Prometheus itself makes, not the service: allowed in any expression. */
const PROMETHEUS_OWN = new Set(['up', 'ALERTS'])

/**
 * The metric names a PromQL expression reads: its identifiers, once strings, label matchers,
 * ranges and the label lists of by/without/on/ignoring/group_* are taken out, that are neither a
 * function (followed by a parenthesis) nor a keyword. Numbers and durations start with a digit.
 */
function metricNames (expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
  const keywords = new Set(['and', 'or', 'unless', 'bool', 'offset', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'inf', 'nan'])
  const names = [...bare.matchAll(/(?<![\w.:])[a-zA-Z_:][\w:]*(?!\s*\(|[\w:])/g)].map((match) => match[0])
  return [...new Set(names.filter((name) => !keywords.has(name.toLowerCase())))]
}

/** A dashboard expression as Grafana sends it: the variables replaced by what this test's Prometheus has. */
function substitute (expr: string): string {
  return expr
    .replaceAll('$__rate_interval', '1m')
    .replace(/\$\{?job\}?/g, JOB)
    .replace(/\$\{?instance\}?/g, '.*')
}

/** GitHub's anchor for a Markdown heading. */
function anchor (heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-')
}

/** A duration of Prometheus's (`5m`, `90s`) in seconds. */
function seconds (duration: string): number {
  const units: Record<string, number> = { s: 1, m: 60, h: 3600 }
  return [...duration.matchAll(/(\d+)([smh])/g)].reduce((sum, [, n, unit]) => sum + Number(n) * units[unit as string]!, 0)
}

t.test('metricNames reads the names of an expression and nothing else', async (t) => {
  t.same(metricNames('sum by (job, le) (rate(a_bucket{route!~"/x|/y", le="0.1"}[5m])) / ignoring (state) b:c:rate5m > 0.25 and on (job) up offset 1m'),
    ['a_bucket', 'b:c:rate5m', 'up'])
  t.same(metricNames('histogram_quantile(0.99, x) or vector(0) * 1e3 unless absent(y{job="or"} == 1)'), ['x', 'y'])
  t.same(metricNames('label_replace(z, "dst", "$1", "src", "(.*)")'), ['z'])
})

t.test('every alert has a for, a severity, a summary, a description and a runbook heading in docs/operations.md', async (t) => {
  const headings = new Set([...operations.matchAll(/^#{2,6} (.+)$/gm)].map(([, heading]) => anchor(heading as string)))
  t.ok(alerts.length >= 8, `${alerts.length} alerts`)
  for (const rule of alerts) {
    const name = rule.alert!
    t.ok(rule.for !== undefined && seconds(rule.for) >= 60, `${name}: for ${rule.for}`)
    t.ok(['critical', 'warning'].includes(rule.labels?.severity ?? ''), `${name}: severity ${rule.labels?.severity}`)
    t.ok((rule.annotations?.summary ?? '').length > 0 && (rule.annotations?.description ?? '').length > 0, `${name}: summary and description`)
    const runbook = /^docs\/operations\.md#(.+)$/.exec(rule.annotations?.runbook_url ?? '')?.[1]
    t.ok(runbook !== undefined && headings.has(runbook), `${name}: runbook_url ${rule.annotations?.runbook_url} is a heading of docs/operations.md`)
  }
})

t.test('the routes the rules leave out are routes of the service, and the duration leaves out every NDJSON stream', async (t) => {
  const routes = new Map<string, string[]>()
  await build(t, {}, { onRoute: (route) => { routes.set(route.url, [...routes.get(route.url) ?? [], ...(route.schema as { produces?: string[] } | undefined)?.produces ?? []]) } })
  const leftOut = (expr: string) => [...expr.matchAll(/route!~"([^"]*)"/g)].flatMap(([, alternatives]) => alternatives!.split('|'))
  for (const rule of rules) {
    for (const route of leftOut(rule.expr)) t.ok(routes.has(route), `${rule.alert ?? rule.record}: ${route} is a route`)
  }
  const duration = rules.find((rule) => rule.record === 'job_le:servant_api_request_duration_seconds_bucket:rate5m')!
  const streams = [...routes].filter(([, produces]) => produces.includes('application/x-ndjson')).map(([url]) => url)
  t.ok(streams.length > 0, `streams: ${streams.join(', ')}`)
  t.same(streams.filter((url) => !leftOut(duration.expr).includes(url)), [], 'each left out of the duration')
})

t.test('every alert has a promtool test where it fires and one where it stays silent', async (t) => {
  const tests = (YAML.parse(fs.readFileSync(rulesTestFile, 'utf8')) as { tests: Array<{ alert_rule_test?: Array<{ alertname: string, exp_alerts?: unknown[] }> }> })
    .tests.flatMap((test) => test.alert_rule_test ?? [])
  for (const rule of alerts) {
    const cases = tests.filter((test) => test.alertname === rule.alert)
    t.ok(cases.some((test) => (test.exp_alerts ?? []).length > 0), `${rule.alert} fires`)
    t.ok(cases.some((test) => (test.exp_alerts ?? []).length === 0), `${rule.alert} stays silent`)
  }
})

/** The datasource every panel and query names: the dashboard's variable, chosen when it is imported. */
const DATASOURCE_VARIABLE = '$' + '{datasource}'

t.test('the dashboard: a current schema, a Prometheus datasource variable every query uses, templated job and instance, no overlapping panels', async (t) => {
  t.ok(dashboard.schemaVersion >= 41, `schemaVersion ${dashboard.schemaVersion}`)
  const variables = new Map(dashboard.templating.list.map((variable) => [variable.name, variable]))
  t.match(variables.get('datasource'), { type: 'datasource', query: 'prometheus' })
  t.match(variables.get('job'), { type: 'query' })
  t.match(variables.get('instance'), { type: 'query', allValue: '.*' })
  for (const panel of queried) {
    t.equal(panel.datasource?.uid, DATASOURCE_VARIABLE, `${panel.title}: the datasource variable`)
    t.ok((panel.targets ?? []).length > 0, `${panel.title}: queries`)
    for (const target of panel.targets ?? []) {
      t.equal(target.datasource?.uid, DATASOURCE_VARIABLE, `${panel.title} ${target.refId}: the datasource variable`)
      const selectors = [...target.expr.matchAll(/\{([^}]*)\}/g)].map(([, matchers]) => matchers as string)
      t.ok(selectors.length > 0 && selectors.every((matchers) => /job=~"\$job"/.test(matchers)), `${panel.title} ${target.refId}: every selector filters on $job`)
    }
  }
  const cells = new Set<string>()
  const overlaps: string[] = []
  for (const { title, gridPos: { x, y, w, h } } of dashboard.panels) {
    t.ok(x >= 0 && x + w <= 24, `${title}: within the 24 columns`)
    for (let row = y; row < y + h; row++) {
      for (let column = x; column < x + w; column++) {
        if (cells.has(`${row},${column}`)) overlaps.push(title)
        cells.add(`${row},${column}`)
      }
    }
  }
  t.same([...new Set(overlaps)], [], 'no panel covers another')
  t.equal(new Set(dashboard.panels.map((panel) => panel.id)).size, dashboard.panels.length, 'panel ids are unique')
})

t.test('the dashboard shows rate, errors and duration per route, saturation and the pool', async (t) => {
  const used = new Set(queried.flatMap((panel) => (panel.targets ?? []).flatMap((target) => metricNames(target.expr))))
  for (const name of ['http_request_duration_seconds_count', 'http_request_duration_seconds_bucket', 'http_requests_in_flight',
    'http_requests_refused_total', 'nodejs_eventloop_lag_p99_seconds', 'process_resident_memory_bytes', 'app_memory_limit_bytes',
    'process_cpu_seconds_total', 'app_ready', 'app_build_info', 'db_pool_connections', 'db_pool_max_connections',
    'db_pool_waiting_requests', 'db_pool_acquire_duration_seconds_bucket', 'db_query_duration_seconds_bucket',
    'job:servant_api_requests_5xx:ratio_rate5m', 'job:servant_api_request_duration_seconds:p99_rate5m']) {
    t.ok(used.has(name), name)
  }
  const byRoute = queried.filter((panel) => (panel.targets ?? []).some((target) => /by \(route/.test(target.expr)))
  t.ok(byRoute.some((panel) => /histogram_quantile\(0\.5,/.test(panel.targets![0]!.expr)), 'p50 per route')
  t.ok(byRoute.some((panel) => /histogram_quantile\(0\.99,/.test(panel.targets![0]!.expr)), 'p99 per route')
  t.ok(byRoute.some((panel) => /status_code=~"5\.\."/.test(panel.targets![0]!.expr)), '5xx per route')
})

/** Runs promtool; its exit status and output. */
function promtool (...args: string[]) {
  const run = spawnSync(PROMTOOL, args, { cwd: directory, encoding: 'utf8', timeout: 60_000 })
  return { status: run.status, output: `${run.stdout}${run.stderr}` }
}

t.test('promtool: the rules and the example config are valid, and the rules pass their unit tests', { skip }, async (t) => {
  const check = promtool('check', 'rules', rulesFile)
  t.equal(check.status, 0, check.output)
  t.match(check.output, `SUCCESS: ${rules.length} rules found`)
  const config = promtool('check', 'config', configFile)
  t.equal(config.status, 0, config.output)
  const tests = promtool('test', 'rules', rulesTestFile)
  t.equal(tests.status, 0, tests.output)
  t.match(tests.output, /SUCCESS/)
})

interface Prometheus {
  url: string
  /** The data of a successful API call; fails the test with Prometheus's error otherwise. */
  api: <T = any>(apiPath: string, params?: Record<string, string>) => Promise<{ status: string, data: T, error?: string }>
}

/**
 * Debian's prometheus on a free loopback port, with the example config given `targets`, a scrape
 * and a rule evaluation every second, its rules file by its absolute path, and no Alertmanager.
 * Stopped, and its directory removed, when `t` ends.
 */
async function startPrometheus (t: Test, targets: string[]): Promise<Prometheus> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'servant-prometheus-'))
  let child: ChildProcess | undefined
  t.teardown(async () => {
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      const gone = once(child, 'exit')
      child.kill('SIGTERM')
      await Promise.race([gone, sleep(10_000).then(() => child!.kill('SIGKILL'))])
    }
    fs.rmSync(work, { recursive: true, force: true })
  })
  const config = YAML.parse(fs.readFileSync(configFile, 'utf8'))
  config.global = { ...config.global, scrape_interval: '1s', evaluation_interval: '1s' }
  config.rule_files = config.rule_files.map((file: string) => path.resolve(directory, file))
  delete config.alerting
  const job = config.scrape_configs.find((scrape: { job_name: string }) => scrape.job_name === JOB)
  job.static_configs = [{ targets }]
  fs.writeFileSync(path.join(work, 'prometheus.yml'), YAML.stringify(config))

  for (let attempt = 1; ; attempt++) {
    const port = await freePort()
    const url = `http://127.0.0.1:${port}`
    child = spawn(PROMETHEUS, [
      `--config.file=${path.join(work, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(work, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn'
    ], { stdio: ['ignore', 'ignore', 'pipe'] })
    let said = ''
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { said = (said + chunk).slice(-8192) })
    const exited = once(child, 'exit')
    const ready = (async () => {
      while (!(await fetch(`${url}/-/ready`).then((res) => res.ok, () => false))) await sleep(100)
    })()
    const outcome = await Promise.race([ready.then(() => 'ready'), exited.then(() => 'exited'), sleep(30_000).then(() => 'timeout')])
    if (outcome === 'ready') {
      const api = async (apiPath: string, params: Record<string, string> = {}) => {
        const res = await fetch(`${url}${apiPath}?${new URLSearchParams(params)}`)
        return await res.json() as { status: string, data: any, error?: string }
      }
      return { url, api }
    }
    if (outcome === 'exited' && attempt < 3 && /address already in use/.test(said)) continue
    throw new Error(`prometheus did not start (${outcome}): ${said.trim().split('\n').slice(-3).join(' | ')}`)
  }
}

/** The metric names of a /metrics page: each sample's, and each family's declared in `# TYPE` (a histogram's series too). */
function exposedNames (text: string): Set<string> {
  const names = new Set<string>()
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\w+)/.exec(line)
    if (type !== null) {
      const [, name, kind] = type as unknown as [string, string, string]
      names.add(name)
      if (kind === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix)
      if (kind === 'summary') for (const suffix of ['_sum', '_count']) names.add(name + suffix)
    } else if (/^[a-zA-Z_:]/.test(line)) {
      names.add(/^[a-zA-Z_:][\w:]*/.exec(line)![0])
    }
  }
  return names
}

/**
 * Whether this machine gives its processes no memory limit: Node reports 0 (unknown) or a cgroup's
 * "max" (2^64 − 1, past any real figure). The service, started here, then exposes no
 * app_memory_limit_bytes; anywhere else it must.
 */
function unconstrained (): boolean {
  const limit = process.constrainedMemory()
  return limit === 0 || limit > Number.MAX_SAFE_INTEGER
}

t.test('a real Prometheus scraping the service on PostgreSQL loads every rule and evaluates every rule and panel on the series the service exposes', { skip, timeout: 120_000 }, async (t) => {
  const server = await startServer(t, { STORE: 'postgres', DATABASE_URL: await testDatabase(), METRICS: 'true' })
  const listening = await server.waitForLog((entry) => entry.msg === 'metrics listening')
  const metricsTarget = `127.0.0.1:${(listening.address as { port: number }).port}`
  // A second target of the job where nothing listens: what ServantInstanceDown is for.
  const deadTarget = `127.0.0.1:${await freePort()}`
  const prometheus = await startPrometheus(t, [metricsTarget, deadTarget])

  // Traffic of every kind the panels show: reads and writes on PostgreSQL (the pool's series), a
  // 404, /failing's 503 (a 5xx route), the probes.
  const requests: Array<[string, RequestInit?]> = [
    ['/hello'], ['/users'], ['/users/1'], ['/users/2'], ['/products'], ['/nowhere'], ['/failing'], ['/health'], ['/ready'],
    ['/users', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Ada Lovelace', age: 36, email: 'ada@engine.org', registration_date: '1843-07-01' }) }]
  ]
  const sendAll = async () => {
    for (const [url, init] of requests) await (await fetch(`${server.url}${url}`, init)).arrayBuffer()
  }
  await sendAll()
  // A rate needs two samples after the traffic, and the recording rules an evaluation after them.
  const value = async (query: string) => {
    const { data } = await prometheus.api('/api/v1/query', { query })
    return data?.result?.[0] === undefined ? undefined : Number(data.result[0].value[1])
  }
  await until(async () => {
    await sendAll()
    return (await value(`job:servant_api_requests:rate5m{job="${JOB}"}`) ?? 0) > 0 &&
      await value(`job:servant_api_requests_5xx:ratio_rate5m{job="${JOB}"}`) !== undefined &&
      (await value(`sum(rate(db_query_duration_seconds_count{job="${JOB}"}[1m]))`) ?? 0) > 0
  }, 60_000).catch(() => {})
  t.equal(await value(`up{job="${JOB}", instance="${metricsTarget}"}`), 1, 'the service is scraped')
  t.equal(await value(`up{job="${JOB}", instance="${deadTarget}"}`), 0, 'the target without a service is down')

  const metricsPage = await (await fetch(`http://${metricsTarget}/metrics`)).text()
  const exposed = exposedNames(metricsPage)
  const stored = new Set<string>((await prometheus.api('/api/v1/label/__name__/values')).data)
  const absentHere = unconstrained() && !exposed.has('app_memory_limit_bytes') ? new Set(['app_memory_limit_bytes']) : new Set<string>()
  if (absentHere.size > 0) t.comment('no memory limit on this machine: app_memory_limit_bytes is absent, as it should be')
  const unknownNames = (expr: string) => metricNames(expr).filter((name) =>
    !PROMETHEUS_OWN.has(name) && !absentHere.has(name) &&
    !(records.has(name) ? stored.has(name) : exposed.has(name) || stored.has(name)))

  t.test('every rule is loaded and evaluated without an error', async (t) => {
    let loaded: Array<{ name: string, health: string, lastError?: string, query: string }> = []
    await until(async () => {
      loaded = (await prometheus.api('/api/v1/rules')).data.groups.flatMap((group: { rules: unknown[] }) => group.rules)
      return loaded.length === rules.length && loaded.every((rule) => rule.health !== 'unknown')
    }, 30_000).catch(() => {})
    t.same(loaded.map((rule) => rule.name).sort(), rules.map((rule) => rule.alert ?? rule.record).sort(), 'all of alerts.yaml')
    for (const rule of loaded) t.same([rule.health, rule.lastError ?? ''], ['ok', ''], `${rule.name}: health ok`)
  })

  t.test('every rule\'s expression evaluates, on metrics the service exposes', async (t) => {
    for (const rule of rules) {
      const name = rule.alert ?? rule.record
      const result = await prometheus.api('/api/v1/query', { query: rule.expr })
      t.equal(result.status, 'success', `${name}: ${result.error ?? 'evaluates'}`)
      t.same(unknownNames(rule.expr), [], `${name}: ${metricNames(rule.expr).join(', ')}`)
    }
  })

  t.test('every recording rule records a series', async (t) => {
    for (const record of records) {
      const { data } = await prometheus.api('/api/v1/query', { query: record })
      t.ok(data.result.length > 0, `${record}: ${JSON.stringify(data.result.map((sample: { value: unknown }) => sample.value))}`)
    }
  })

  t.test('every panel\'s query evaluates over the last seconds and returns series, on metrics the service exposes', async (t) => {
    const end = Date.now() / 1000
    for (const panel of queried) {
      for (const target of panel.targets ?? []) {
        const query = substitute(target.expr)
        const what = `${panel.title} ${target.refId}`
        const result = target.instant === true
          ? await prometheus.api('/api/v1/query', { query })
          : await prometheus.api('/api/v1/query_range', { query, start: String(end - 30), end: String(end), step: '1' })
        t.equal(result.status, 'success', `${what}: ${result.error ?? 'evaluates'}`)
        t.same(unknownNames(query), [], `${what}: ${metricNames(query).join(', ')}`)
        if (!metricNames(query).some((name) => absentHere.has(name))) t.ok(result.data?.result?.length > 0, `${what}: returns series`)
      }
    }
  })

  t.test('the dashboard\'s variables list the job and the instance; its annotation query evaluates', async (t) => {
    for (const variable of dashboard.templating.list.filter((variable) => variable.type === 'query')) {
      const query = typeof variable.query === 'string' ? variable.query : variable.query.query
      const [, match, label] = /^label_values\((.+),\s*(\w+)\)$/.exec(query.trim()) ?? []
      t.ok(match !== undefined, `${variable.name}: label_values(selector, label)`)
      t.same(unknownNames(substitute(match!)), [], `${variable.name}: ${match}`)
      const { data } = await prometheus.api(`/api/v1/label/${label}/values`, { 'match[]': substitute(match!) })
      t.ok(data.includes(variable.name === 'job' ? JOB : metricsTarget), `${variable.name}: ${JSON.stringify(data)}`)
    }
    for (const annotation of dashboard.annotations.list.filter((annotation) => annotation.expr !== undefined)) {
      const query = substitute(annotation.expr!)
      t.equal((await prometheus.api('/api/v1/query', { query })).status, 'success', query)
      t.same(unknownNames(query), [], query)
    }
  })

  t.test('ServantInstanceDown is pending for the target without a service, and for it alone', async (t) => {
    let pending: Array<{ labels: Record<string, string>, state: string }> = []
    await until(async () => {
      pending = (await prometheus.api('/api/v1/alerts')).data.alerts.filter((alert: { labels: { alertname: string } }) => alert.labels.alertname === 'ServantInstanceDown')
      return pending.length > 0
    }, 30_000).catch(() => {})
    t.same(pending.map((alert) => [alert.labels.instance, alert.state]), [[deadTarget, 'pending']])
  })
})
