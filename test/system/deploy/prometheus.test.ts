import fs from 'node:fs'
import t from 'tap'
import YAML from 'yaml'
import { build } from '../../helpers/index.js'
import { alerts, dashboard, metricNames, operations, queried, rules, rulesTestFile } from '../../helpers/prometheus.js'

// deploy/prometheus/ and deploy/grafana/dashboard.json as files: every alert documented and
// tested both ways, the routes the rules name, the dashboard's layout and the series it covers.
// Against Debian's promtool and prometheus: test/system/prometheus/ (`npm run check:prometheus`).

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
    // A URL where Prometheus's external label `runbooks` says (prometheus.yml), else the repository's path.
    const runbook = /^\{\{ or \$externalLabels\.runbooks "docs\/operations\.md" \}\}#(.+)$/.exec(rule.annotations?.runbook_url ?? '')?.[1]
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
