import t from 'tap'
import { Batcher } from '../../../lib/postgres/batcher.js'

t.test('Batcher: calls made together go in one run, at most maxCalls and maxWeight at a time, concurrency runs in flight', async (t) => {
  const runs: string[][] = []
  const pending: Array<() => void> = []
  const batcher = new Batcher<string, string>(async (inputs) => {
    runs.push(inputs)
    await new Promise<void>((resolve) => pending.push(resolve))
    if (inputs.includes('fail')) throw new Error('failed')
    return inputs.map((input) => input.toUpperCase())
  }, { concurrency: 2, maxCalls: 3, maxWeight: 4, weight: (input) => input.length })
  const settle = () => new Promise((resolve) => setImmediate(resolve))
  const calls = ['a', 'b', 'c', 'd', 'eeeeee', 'f'].map((input) => batcher.add(input))
  await settle()
  t.same(runs, [['a', 'b', 'c'], ['d']], 'three at most; then weight 4 at most (d + eeeeee is heavier), two runs in flight')
  const failing = t.rejects(batcher.add('fail'), /failed/, 'a failed run fails its call')
  while (pending.length > 0) {
    pending.shift()!()
    await settle()
  }
  t.same(runs, [['a', 'b', 'c'], ['d'], ['eeeeee'], ['f'], ['fail']],
    'as runs end, the next: a call heavier than maxWeight alone, then what weighs 4 at most')
  t.same(await Promise.all(calls), ['A', 'B', 'C', 'D', 'EEEEEE', 'F'], 'each call its own output')
  await failing

  const failingTogether = new Batcher<number, number>(async () => { throw new Error('down') }, { concurrency: 1, maxCalls: 10 })
  t.same((await Promise.allSettled([1, 2].map((n) => failingTogether.add(n)))).map((outcome) => outcome.status), ['rejected', 'rejected'],
    'and every call of it')
})

t.test('Batcher: calls that weigh maxWeight exactly go together; a call after the batcher went idle goes too', async (t) => {
  const runs: string[][] = []
  const batcher = new Batcher<string, string>(async (inputs) => {
    runs.push(inputs)
    return inputs
  }, { concurrency: 1, maxCalls: 10, maxWeight: 4, weight: (input) => input.length })
  t.same(await Promise.all(['a', 'bbb', 'c'].map((input) => batcher.add(input))), ['a', 'bbb', 'c'])
  t.same(runs, [['a', 'bbb'], ['c']], 'a weight of 4 is not over maxWeight 4')
  t.same(await batcher.add('later'), 'later', 'the idle batcher sends a new call')
  t.same(runs, [['a', 'bbb'], ['c'], ['later']])
})

t.test('Batcher: maxWeight without weight, or weight without maxWeight: maxCalls alone counts', async (t) => {
  for (const options of [{ maxWeight: 1 }, { weight: () => 100 }]) {
    const runs: number[][] = []
    const batcher = new Batcher<number, number>(async (inputs) => {
      runs.push(inputs)
      return inputs
    }, { concurrency: 1, maxCalls: 2, ...options })
    t.same(await Promise.all([1, 2, 3].map((n) => batcher.add(n))), [1, 2, 3])
    t.same(runs, [[1, 2], [3]], JSON.stringify(Object.keys(options)))
  }
})
