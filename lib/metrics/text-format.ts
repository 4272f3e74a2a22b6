// Prometheus's text exposition format (version 0.0.4), for the series the service keeps itself:
// what it counts on a request's path is kept in plain numbers and written out only when scraped.

/** A label value in the text format: backslash, double quote and line feed escaped. */
export function labelValue (value: string): string {
  return value.replace(/[\\"\n]/g, (c) => c === '\n' ? '\\n' : `\\${c}`)
}

/** Labels as the text format writes them between braces, without the braces: `a="1",b="x"`. */
export function labelPairs (labels: Readonly<Record<string, string | number>>): string {
  return Object.entries(labels).map(([name, value]) => `${name}="${labelValue(String(value))}"`).join(',')
}

/** One sample of a family: its labels (none: `{}`) and its value. */
export type Sample = readonly [labels: Readonly<Record<string, string | number>>, value: number]

/**
 * A family of gauges or counters with its HELP and TYPE lines, a line per sample; nothing at all
 * without a sample (a series that is absent, not one at 0).
 */
export function family (name: string, type: 'gauge' | 'counter', help: string, samples: readonly Sample[]): string {
  if (samples.length === 0) return ''
  const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`]
  for (const [labels, value] of samples) {
    const pairs = labelPairs(labels)
    lines.push(pairs === '' ? `${name} ${value}` : `${name}{${pairs}} ${value}`)
  }
  return lines.join('\n') + '\n'
}
