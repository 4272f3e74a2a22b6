import t from 'tap'
import { family, labelPairs, labelValue } from '../../../lib/metrics/text-format.js'

t.test('a family: its HELP and TYPE, then a line per sample, labelled or not', async (t) => {
  t.equal(family('a_total', 'counter', 'As', [[{ cause: 'x' }, 1], [{ cause: 'y' }, 0]]), [
    '# HELP a_total As',
    '# TYPE a_total counter',
    'a_total{cause="x"} 1',
    'a_total{cause="y"} 0',
    ''
  ].join('\n'))
  t.equal(family('b', 'gauge', 'B', [[{}, 2.5]]), '# HELP b B\n# TYPE b gauge\nb 2.5\n', 'no labels: no braces')
  t.equal(family('c', 'gauge', 'C', []), '', 'no sample: the family is absent, not at 0')
})

t.test('label values are escaped as the text format wants: backslash, double quote, line feed', async (t) => {
  t.equal(labelValue('a\\b"c\nd'), 'a\\\\b\\"c\\nd')
  t.equal(labelPairs({ a: 'x"y', b: 200 }), 'a="x\\"y",b="200"', 'in order, numbers as text')
  t.equal(labelPairs({}), '')
})
