import t from 'tap'
import { throttled } from '../../lib/throttle.js'

t.test('a report at most once per interval: the first event at once, then the count of each interval with the next event after it', async (t) => {
  let now = 0
  const reports: Array<[number, string]> = []
  const note = throttled(1000, (count, what: string) => { reports.push([count, what]) }, () => now)
  note('a')
  t.same(reports, [[1, 'a']], 'the first at once')
  for (const what of ['b', 'c', 'd']) {
    now += 300
    note(what)
  }
  t.same(reports, [[1, 'a']], 'none more within the interval')
  now += 200
  note('e')
  t.same(reports, [[1, 'a'], [4, 'e']], 'the four since, with the arguments of the last')
  now += 5000
  note('f')
  t.same(reports.at(-1), [1, 'f'], 'after a quiet spell, one again')
})
