import { spawnSync } from 'node:child_process'
import type { AddressInfo } from 'node:net'
import { Registry, collectDefaultMetrics } from 'prom-client'
import t from 'tap'
import { memoryLimitSeries } from '../../../lib/metrics/memory-limit.js'
import { build, logSink, testDatabase } from '../../helpers/index.js'
import { PROMTOOL, requirePrometheus } from '../../helpers/prometheus.js'

// The metrics listener's output (plugins/edge/metrics.ts) read by Prometheus's own parser and
// linter, `promtool check metrics`. In the system tier (`npm run test:system`; `npm run
// check:prometheus` runs test/system/prometheus/ alone); without Debian's prometheus the file
// fails, naming the package.

requirePrometheus()

/** promtool's verdict on a text: its exit status and each problem it reports. */
function promtoolCheck (text: string) {
  const { status, stdout, stderr } = spawnSync(PROMTOOL, ['check', 'metrics'], { input: text, encoding: 'utf8' })
  return { status, problems: `${stdout}${stderr}`.split('\n').filter((line) => line !== '') }
}

/** The names of prom-client's process metrics. */
async function processMetricNames (): Promise<string[]> {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  return (await registry.getMetricsAsJSON()).map((metric) => metric.name)
}

t.test('promtool check metrics on the real output: it parses, and no series of the service breaks a naming rule', async (t) => {
  const logs = logSink()
  const app = await build(t, { DATABASE_URL: await testDatabase() }, { logger: logs.logger })
  const address = logs.entries.find((entry) => entry.msg === 'metrics listening')?.address as AddressInfo
  await app.inject({ url: '/users/1' })
  const text = await (await fetch(`http://127.0.0.1:${address.port}/metrics`)).text()
  for (const name of ['http_request_duration_seconds_count', 'http_requests_in_flight', 'http_requests_refused_total', 'app_build_info', 'app_ready',
    'db_pool_connections', 'db_pool_max_connections', 'db_pool_waiting_requests', 'db_pool_acquire_duration_seconds_count', 'db_query_duration_seconds_count']) {
    t.match(text, new RegExp(`^${name}[{ ]`, 'm'), `${name} is in the output checked`)
  }
  const { status, problems } = promtoolCheck(text)
  t.notOk(problems.some((problem) => /error while linting|parsing error/.test(problem)), 'it parses')
  // prom-client's own process metrics name three gauges `_total`, which the linter reports: theirs, not ours.
  const processNames = await processMetricNames()
  t.same(problems.filter((problem) => !processNames.some((name) => problem.startsWith(`${name} `))), [], 'no problem with a series of the service')
  t.ok(status === 0 || (status === 3 && problems.length > 0), `promtool's status: ${status}`)

  const limit = promtoolCheck(memoryLimitSeries(() => 2 ** 30))
  t.same(limit, { status: 0, problems: [] }, 'app_memory_limit_bytes, absent here, checked by itself')
})
