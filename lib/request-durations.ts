import { labelPairs } from './metrics/text-format.js'

/** One series of a histogram: for the requests, those of one method, route and status. */
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

/**
 * A Prometheus histogram of durations (of requests by method, route and status code; of database
 * queries), kept in plain counters and written in the text exposition format (0.0.4) when scraped.
 * An observation costs a bucket search and three additions: the caller keeps each series it gets
 * (for requests, by route, method and status), so nothing is hashed or validated per observation,
 * which prom-client's `labels().observe()` does on every call.
 */
export class DurationHistogram {
  readonly #series: DurationSeries[] = []

  constructor (readonly name: string, readonly help: string, readonly bounds: readonly number[]) {}

  /** A new series for these labels (none: the histogram's only series): the caller asks once per combination and keeps it. */
  series (labels: Readonly<Record<string, string | number>> = {}): DurationSeries {
    const series = new DurationSeries(labelPairs(labels), this.bounds)
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
        lines.push(`${name}_bucket{le="${bound}"${labels === '' ? '' : `,${labels}`}} ${cumulative}`)
      }
      const braced = labels === '' ? '' : `{${labels}}`
      lines.push(`${name}_sum${braced} ${sum}`, `${name}_count${braced} ${count}`)
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
    if (series === undefined) byStatus.set(statusCode, series = histogram.series({ method, route, status_code: statusCode }))
    return series
  }
}
