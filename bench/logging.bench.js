// What the log lines of a request cost at the production default: the same build side by side, the
// service at LOG_LEVEL=warn (what every other bench runs: a request that goes well writes nothing)
// and at the default (LOG_LEVEL unset: info), each one's stdout a pipe that this process reads as a
// log collector does, in alternating rounds. Server CPU per request from /proc; the ratio default /
// warn per request, target ≤ 1.10 (issue 46). `lines / req` and `bytes / req` are what the default
// side wrote for each request sent (counted once its lines have had time to arrive), `dropped / req`
// the lines it said it dropped because this reader fell behind: the check that it logged them all.
// Each set is a fresh pair of processes (a process's JIT can sit 10–20 % from
// another's), and sets take turns at which side is started and measured first in each round (the
// side measured second had come out cheaper); ratios are taken per round within a set, their
// median over all rounds is the figure, their lowest and highest the spread.
// BENCH_SETS (2), BENCH_ROUNDS (3 per set) and BENCH_DURATION (4 s):
// `BENCH_SETS=1 BENCH_ROUNDS=1 BENCH_DURATION=1 npm run bench -- logging` is a quick run.
// BENCH_LOG_LEVEL: the second side's level (unset: the production default, info).
// `BENCH_LOG_LEVEL=warn npm run bench -- logging` is the control: both sides alike, its ratios are
// the bench's own noise, what a ratio of the default must be read against (bench/README.md).
import { setTimeout as sleep } from 'node:timers/promises'
import { USER_REQUESTS, compare, generator, median, printTable, startService, summarize } from './lib.js'

const TARGET = 1.1
const sets = Number(process.env.BENCH_SETS ?? 2)
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const duration = Number(process.env.BENCH_DURATION ?? 4)
const level = process.env.BENCH_LOG_LEVEL || undefined
/** The second side's name in the tables: `info` at the default, else its level, told from the first side's. */
const side = level === undefined ? 'info' : `${level} (2nd)`
/** Longer than the logger's delay before it writes (docs/operations.md, Logs): every line is in by then. */
const SETTLE_MS = 1500

// POST last: it grows the store that GET /users lists.
const REQUESTS = [
  { name: 'GET /hello?name=x', path: '/hello?name=x' },
  USER_REQUESTS.list,
  USER_REQUESTS.one,
  { name: 'GET /colors (Range)', path: '/colors', headers: { range: 'name; limit 10' } },
  USER_REQUESTS.add
]
// Production settings; no catch-all: a path that is missing answers 404 instead of the page.
const env = { DOCS_CATCH_ALL: 'false' }

/**
 * One pair of processes: per request, each round's CPU per request on both sides, and what the
 * default side logged. `warnFirst`: which side starts first and is measured first in each round.
 * Sets take turns, so that the default is not always the side measured second: with both sides at
 * `warn`, that side had come out 2–7 % cheaper (bench/README.md, Logging).
 */
async function measureSet (warnFirst) {
  const start = (logLevel) => startService({ ...env, LOG_LEVEL: logLevel }, { readStdout: true })
  const [warn, info] = warnFirst ? [await start('warn'), await start(level)] : [await start(level), await start('warn')].reverse()
  try {
    const results = []
    for (const { path, method, body, headers = {} } of REQUESTS) {
      const before = info.logged()
      const sides = warnFirst ? [warn, info] : [info, warn]
      const measured = await compare(sides, path, { method, body, headers, rounds, duration })
      const [atWarn, atInfo] = warnFirst ? measured : [...measured].reverse()
      await sleep(SETTLE_MS)
      const after = info.logged()
      results.push({
        warn: atWarn.cpuRounds,
        info: atInfo.cpuRounds,
        lines: (after.lines - before.lines) / atInfo.requests,
        dropped: (after.dropped - before.dropped) / atInfo.requests,
        bytes: (after.bytes - before.bytes) / atInfo.requests
      })
    }
    return results
  } finally {
    await warn.stop()
    await info.stop()
  }
}

const measured = []
for (let set = 0; set < sets; set++) measured.push(await measureSet(set % 2 === 0))

const rows = []
const summary = []
for (const [index, { name }] of REQUESTS.entries()) {
  const perSet = measured.map((set) => set[index])
  const warn = perSet.flatMap((set) => set.warn)
  const info = perSet.flatMap((set) => set.info)
  const ratios = perSet.flatMap((set) => set.info.map((micros, round) => micros / set.warn[round]))
  const ratio = median(ratios)
  rows.push({
    request: name,
    'warn µs': round(median(warn)),
    'warn spread': spread(warn),
    [`${side} µs`]: round(median(info)),
    [`${side} spread`]: spread(info),
    [`${side} ÷ warn`]: round(ratio, 2),
    'ratio spread': spread(ratios, 2),
    [`≤ ${TARGET}`]: met(ratio),
    'lines / req': round(median(perSet.map((set) => set.lines)), 2),
    'dropped / req': round(median(perSet.map((set) => set.dropped)), 3),
    'bytes / req': Math.round(median(perSet.map((set) => set.bytes)))
  })
  summary.push({ figure: `${name}: LOG_LEVEL ${level === undefined ? 'info (default)' : level} / warn`, ratio: round(ratio, 2), target: level === undefined ? `≤ ${TARGET}` : 'control', met: met(ratio) })
}
console.log(`Node ${process.version}, ${generator} -c50, ${sets} set(s) of processes × ${rounds} round(s) of ${duration} s per side and request, medians over all rounds (spread: lowest–highest round)`)
printTable(rows)
summarize(summary)

/** Whether a ratio of the default meets the target; the control has none. */
function met (ratio) {
  return level !== undefined ? '—' : ratio <= TARGET ? 'yes' : 'NO'
}

function round (value, digits = 1) {
  return Number(value.toFixed(digits))
}

function spread (values, digits = 1) {
  return `${round(Math.min(...values), digits)}–${round(Math.max(...values), digits)}`
}
