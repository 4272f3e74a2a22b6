/** One series of the histogram: the requests of one method, route and status. */
export class DurationSeries {
  /** Observations per bucket, not cumulative: index i counts those ≤ bounds[i] and > bounds[i − 1]; the last, those above every bound. */
  readonly counts: Float64Array
  sum = 0
  count = 0

  constructor (readonly labels: string, private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1)
  }

  observe (seconds: number): void {
    const { bounds } = this
    let bucket = 0
    while (bucket < bounds.length && seconds > (bounds[bucket] as number)) bucket++
    this.counts[bucket]! += 1
    this.sum += seconds
    this.count += 1
  }
}

/** A label value in the text format: backslash, double quote and line feed escaped. */
function labelValue (value: string): string {
  return value.replace(/[\\"\n]/g, (c) => c === '\n' ? '\\n' : `\\${c}`)
}

/**
 * A Prometheus histogram of request durations by method, route and status code, kept in plain
 * counters and written in the text exposition format (0.0.4) when scraped. A request costs a
 * bucket search and three additions: the caller keeps each series it gets (by route, method and
 * status), so nothing is hashed or validated per request, which prom-client's `labels().observe()`
 * does on every call.
 */
export class DurationHistogram {
  readonly #series: DurationSeries[] = []

  constructor (readonly name: string, readonly help: string, readonly bounds: readonly number[]) {}

  /** A new series for these labels: the caller asks once per combination and keeps it. */
  series (method: string, route: string, statusCode: number): DurationSeries {
    const labels = `method="${labelValue(method)}",route="${labelValue(route)}",status_code="${statusCode}"`
    const series = new DurationSeries(labels, this.bounds)
    this.#series.push(series)
    return series
  }

  /** The histogram in the text format: cumulative buckets (`le` first, as prom-client writes them), sum and count per series. */
  render (): string {
    const { name } = this
    const lines = [`# HELP ${name} ${this.help}`, `# TYPE ${name} histogram`]
    for (const { labels, counts, sum, count } of this.#series) {
      let cumulative = 0
      for (const [index, bound] of [...this.bounds, '+Inf' as const].entries()) {
        cumulative += counts[index] as number
        lines.push(`${name}_bucket{le="${bound}",${labels}} ${cumulative}`)
      }
      lines.push(`${name}_sum{${labels}} ${sum}`, `${name}_count{${labels}} ${count}`)
    }
    return lines.join('\n') + '\n'
  }
}

/**
 * The series of one route (or of the requests no route matched), by method and status: found
 * with two lookups on values Node already has (the method string, the status number).
 */
export function routeSeries (histogram: DurationHistogram, route: string): (method: string, statusCode: number) => DurationSeries {
  const byMethod = new Map<string, Map<number, DurationSeries>>()
  return (method, statusCode) => {
    let byStatus = byMethod.get(method)
    if (byStatus === undefined) byMethod.set(method, byStatus = new Map())
    let series = byStatus.get(statusCode)
    if (series === undefined) byStatus.set(statusCode, series = histogram.series(method, route, statusCode))
    return series
  }
}
