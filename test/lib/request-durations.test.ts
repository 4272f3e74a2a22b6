import t from 'tap'
import { DurationHistogram, routeSeries } from '../../lib/request-durations.js'

t.test('a histogram in the text format: cumulative buckets, a bound counts what equals it, sum and count', async (t) => {
  const histogram = new DurationHistogram('d', 'Durations', [0.1, 1])
  const seriesOf = routeSeries(histogram, '/a/:id')
  for (const seconds of [0.05, 0.1, 0.5, 3]) seriesOf('GET', 200).observe(seconds)
  t.equal(histogram.render(), [
    '# HELP d Durations',
    '# TYPE d histogram',
    'd_bucket{le="0.1",method="GET",route="/a/:id",status_code="200"} 2',
    'd_bucket{le="1",method="GET",route="/a/:id",status_code="200"} 3',
    'd_bucket{le="+Inf",method="GET",route="/a/:id",status_code="200"} 4',
    'd_sum{method="GET",route="/a/:id",status_code="200"} 3.65',
    'd_count{method="GET",route="/a/:id",status_code="200"} 4',
    ''
  ].join('\n'))
})

t.test('each method and status of a route is one series, made once and kept', async (t) => {
  const histogram = new DurationHistogram('d', 'Durations', [1])
  const seriesOf = routeSeries(histogram, '/a')
  t.equal(seriesOf('GET', 200), seriesOf('GET', 200), 'the same series again')
  t.not(seriesOf('GET', 200), seriesOf('GET', 404), 'by status')
  t.not(seriesOf('GET', 200), seriesOf('HEAD', 200), 'by method')
  t.equal(histogram.render().split('\n').filter((line) => line.startsWith('d_count')).length, 3)
})

t.test('label values are escaped as the text format wants: backslash, double quote, line feed', async (t) => {
  const histogram = new DurationHistogram('d', 'Durations', [])
  routeSeries(histogram, 'a\\b"c\nd')('GET', 200).observe(1)
  t.match(histogram.render(), 'route="a\\\\b\\"c\\nd"')
})

t.test('a histogram without labels: one series, `le` alone in braces, none on the sum and count', async (t) => {
  const histogram = new DurationHistogram('q', 'Queries', [0.01])
  const series = histogram.series()
  series.observe(0.005)
  series.observe(0.5)
  t.equal(histogram.render(), [
    '# HELP q Queries',
    '# TYPE q histogram',
    'q_bucket{le="0.01"} 1',
    'q_bucket{le="+Inf"} 2',
    'q_sum 0.505',
    'q_count 2',
    ''
  ].join('\n'))
})
