// Where the request line's cost goes inside the running service, at the production default: not a
// bench of `npm run bench` (no baseline, no ratio), a diagnostic for whoever changes the line
// (bench/README.md, Logging). The service (dist/bundle/server.js, `LOG_LEVEL` unset: info) is loaded
// by wrk -c50 as the `logging` bench loads it, its stdout read as that bench reads it, while Linux's
// `perf` samples its call stacks; then, per request, the CPU under each part of the line's path: the
// samples whose stack holds it, times perf's period, over the requests wrk sent. Read in the same
// process, round after round, these move by some 5 % where a ratio of two processes moves by 10 %.
// BENCH_PROFILE_PATH (/hello?name=x), BENCH_ROUNDS (3), BENCH_DURATION (5 s). Needs Debian's
// `linux-perf` (without it, it says so and ends), run as root: another user samples the kernel only
// where kernel.perf_event_paranoid ≤ 1.
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { generator, load, printTable, serverEntry, startProcess } from './lib.js'

const requestPath = process.env.BENCH_PROFILE_PATH ?? '/hello?name=x'
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const duration = Number(process.env.BENCH_DURATION ?? 5)
const FREQUENCY = 2999

/**
 * The parts of the path, by a function in the stack (JavaScript names from `--perf-basic-prof`).
 * Only functions that V8 does not inline into their callers: one inlined leaves no frame of its own
 * (the request's own calls, `incomingRequest` and `requestCompleted`, come out at 0 in one process
 * and 40–110 ns in another).
 */
const PARTS = {
  'end of turn (all)': /processImmediate/,
  'the lines serialised': /writeDeferred/,
  'written to stdout': /writeSync|WriteBuffer/,
  'responses sent (kernel)': /^tcp_sendmsg/
}

if (spawnSync('perf', ['--version']).status !== 0) {
  console.log('logging-profile: perf is not installed (Debian: apt-get install linux-perf); nothing measured')
  process.exit(0)
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'logging-profile-'))
const service = await startProcess(['--perf-basic-prof', serverEntry], { NODE_ENV: 'production', STORE: 'memory', DOCS_CATCH_ALL: 'false' }, '/health', 60_000, { readStdout: true })
try {
  await load(service.url + requestPath, { duration: 3 })
  const rows = []
  for (let round = 0; round < rounds; round++) {
    const data = path.join(dir, `round-${round}.data`)
    const record = spawn('perf', ['record', '-g', '-F', String(FREQUENCY), '-p', String(service.pid), '-o', data], { stdio: 'ignore' })
    // perf attaches before the load starts.
    await new Promise((resolve) => setTimeout(resolve, 300))
    const run = await load(service.url + requestPath, { duration })
    record.kill('SIGINT')
    await new Promise((resolve) => record.once('exit', resolve))
    const script = execFileSync('perf', ['script', '-i', data, '-F', 'ip,sym'], { maxBuffer: 1 << 30, encoding: 'utf8' })
    const samples = { total: 0, ...Object.fromEntries(Object.keys(PARTS).map((part) => [part, 0])) }
    for (const stack of script.split('\n\n')) {
      const frames = stack.trim().split('\n').map((line) => line.trim().split(/\s+/).slice(1).join(' '))
      if (frames[0] === '') continue
      samples.total++
      for (const [part, pattern] of Object.entries(PARTS)) if (frames.some((frame) => pattern.test(frame))) samples[part]++
    }
    const ns = (count) => Math.round(count * 1e9 / FREQUENCY / run.requests)
    rows.push({ round: round + 1, requests: run.requests, ...Object.fromEntries(Object.entries(samples).map(([part, count]) => [`${part} ns`, ns(count)])) })
  }
  console.log(`Node ${process.version}, ${generator} -c50, GET ${requestPath} at info, ${rounds} round(s) of ${duration} s: CPU per request under each part (ns; \`total ns\`: the whole request)`)
  printTable(rows)
} finally {
  await service.stop()
  fs.rmSync(dir, { recursive: true, force: true })
  fs.rmSync(`/tmp/perf-${service.pid}.map`, { force: true })
}
