import fs from 'node:fs'
import path from 'node:path'
import YAML from 'yaml'
import { projectRoot } from '../../lib/project-root.js'

// deploy/prometheus/ (the rules, their promtool tests, the example config) and
// deploy/grafana/dashboard.json as the tests read them: test/system/deploy/prometheus.test.ts checks
// them as files, test/system/prometheus/ against Debian's promtool and prometheus (which .ci/run
// installs for `npm run test:system`).

/** Debian's prometheus and promtool (`apt-get install --no-install-recommends prometheus`). */
export const PROMETHEUS = '/usr/bin/prometheus'
export const PROMTOOL = '/usr/bin/promtool'

/** Throws, naming the package, unless Debian's prometheus and promtool are installed: test/system/prometheus/ fails without them. */
export function requirePrometheus (): void {
  if (!fs.existsSync(PROMETHEUS) || !fs.existsSync(PROMTOOL)) {
    throw new Error(`${PROMETHEUS} and ${PROMTOOL} are not installed (Debian: apt-get install --no-install-recommends prometheus)`)
  }
}

export const directory = path.join(projectRoot, 'deploy', 'prometheus')
export const rulesFile = path.join(directory, 'alerts.yaml')
export const rulesTestFile = path.join(directory, 'alerts.test.yaml')
export const configFile = path.join(directory, 'prometheus.yml')
export const dashboardFile = path.join(projectRoot, 'deploy', 'grafana', 'dashboard.json')
export const operations = fs.readFileSync(path.join(projectRoot, 'docs', 'operations.md'), 'utf8')

export interface Rule { alert?: string, record?: string, expr: string, for?: string, labels?: Record<string, string>, annotations?: Record<string, string> }
export const rules = (YAML.parse(fs.readFileSync(rulesFile, 'utf8')) as { groups: Array<{ rules: Rule[] }> }).groups.flatMap((group) => group.rules)
export const alerts = rules.filter((rule) => rule.alert !== undefined)
export const records = new Set(rules.flatMap((rule) => rule.record ?? []))

export interface Target { expr: string, refId: string, instant?: boolean, datasource?: { uid?: string } }
export interface Panel { type: string, title: string, id: number, gridPos: { x: number, y: number, w: number, h: number }, datasource?: { type?: string, uid?: string }, targets?: Target[] }
export interface Variable { name: string, type: string, query: string | { query: string }, allValue?: string }
export const dashboard = JSON.parse(fs.readFileSync(dashboardFile, 'utf8')) as {
  schemaVersion: number
  panels: Panel[]
  templating: { list: Variable[] }
  annotations: { list: Array<{ expr?: string, datasource?: { uid?: string } }> }
}
export const queried = dashboard.panels.filter((panel) => panel.type !== 'row')

/** The job the rules select, and the example config's scrape job. */
export const JOB = 'servant-example-api'

/** What Prometheus itself makes, not the service: allowed in any expression. */
export const PROMETHEUS_OWN = new Set(['up', 'ALERTS'])

/**
 * The metric names a PromQL expression reads: its identifiers, once strings, label matchers,
 * ranges and the label lists of by/without/on/ignoring/group_* are taken out, that are neither a
 * function (followed by a parenthesis) nor a keyword. Numbers and durations start with a digit.
 */
export function metricNames (expr: string): string[] {
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
export function substitute (expr: string): string {
  return expr
    .replaceAll('$__rate_interval', '1m')
    .replace(/\$\{?job\}?/g, JOB)
    .replace(/\$\{?instance\}?/g, '.*')
}
