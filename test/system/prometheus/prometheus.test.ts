import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import YAML from 'yaml'
import { startServer, testDatabase, until } from '../../helpers/index.js'
import { freePort } from '../../helpers/postgres-server.js'
import {
  JOB, PROMETHEUS, PROMETHEUS_OWN, PROMTOOL, configFile, dashboard, directory, metricNames, queried, records, requirePrometheus, rules,
  rulesFile, rulesTestFile, substitute
} from '../../helpers/prometheus.js'

// deploy/prometheus/ and deploy/grafana/dashboard.json against the real thing: promtool's checks
// and the rules' unit tests, then Debian's prometheus scraping the service on PostgreSQL, every
// rule and every panel's query evaluated by it. In the system tier (`npm run test:system`; `npm run
// check:prometheus` runs test/system/prometheus/ alone); without Debian's prometheus the file
// fails, naming the package.

requirePrometheus()

/** Runs promtool; its exit status and output. */
function promtool (...args: string[]) {
  const run = spawnSync(PROMTOOL, args, { cwd: directory, encoding: 'utf8', timeout: 60_000 })
  return { status: run.status, output: `${run.stdout}${run.stderr}` }
}

t.test('promtool: the rules and the example config are valid, and the rules pass their unit tests', async (t) => {
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

t.test('a real Prometheus scraping the service on PostgreSQL loads every rule and evaluates every rule and panel on the series the service exposes', { timeout: 120_000 }, async (t) => {
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
    let pending: Array<{ labels: Record<string, string>, annotations: Record<string, string>, state: string }> = []
    await until(async () => {
      pending = (await prometheus.api('/api/v1/alerts')).data.alerts.filter((alert: { labels: { alertname: string } }) => alert.labels.alertname === 'ServantInstanceDown')
      return pending.length > 0
    }, 30_000).catch(() => {})
    t.same(pending.map((alert) => [alert.labels.instance, alert.state]), [[deadTarget, 'pending']])
    const runbooks = YAML.parse(fs.readFileSync(configFile, 'utf8')).global.external_labels.runbooks
    t.match(runbooks, /^https:\/\//, `prometheus.yml's external label runbooks is a URL: ${runbooks}`)
    t.equal(pending[0]?.annotations.runbook_url, `${runbooks}#servantinstancedown`, 'the runbook_url is a URL, from the external label')
  })
})
