// An open-model load generator, run as a process of its own: requests leave at a fixed rate,
// whether or not the earlier ones were answered, and each one's latency counts from the moment it
// was scheduled to leave, not from when a connection became free. wrk is a closed model: each of
// its connections waits for an answer before its next request, so a server that slows down also
// slows the load, and the requests that would have waited meanwhile are never sent nor counted
// (coordinated omission). Here a slow answer makes the next requests queue, and that queueing is
// in their latency, as a caller of a service under a steady load would see it.
//
// Usage: node bench/open-load.js '<JSON>' with
//   targets      URLs of the servers (origin only); request i goes to targets[i % targets.length]
//   path, method ('GET'), headers ({}), body (a string, sent with its Content-Length)
//   rate         requests per second, over all targets
//   duration     seconds of sending
//   connections  keep-alive connections in all (split across the targets), 50 by default
//   client       'net' (open-load-net.js: bare sockets, the default), 'undici' (a Pool per target)
//                or 'http' (node:http and its Agent): the generator's CPU per request is the
//                servers' lost, and node:http's and undici's are several times a small request's
//                in the service (figures: bench/README.md)
//   warmup       seconds sent at the same rate before the measured ones, and not counted (1):
//                both processes' JIT compiles the paths first
//   grace        seconds to wait for the last answers after the sending ends (5)
// Prints one JSON line: the latency percentiles (ms), the rates, the errors, how late the requests
// left against their schedule, and this process's own CPU time, so that a run whose generator
// could not keep up (too late, or near a full core) can be told from a slow server.
import fs from 'node:fs'
import http from 'node:http'
import { netSender } from './open-load-net.js'

const options = JSON.parse(process.argv[2] ?? '{}')
const { targets, path = '/', method = 'GET', headers = {}, body, rate, duration, connections = 50, client = 'net', warmup = 1, grace = 5 } = options
if (!Array.isArray(targets) || targets.length === 0 || !(rate > 0) || !(duration > 0)) {
  throw new Error('open-load.js: give targets, rate and duration (see its first comment)')
}

const total = Math.max(1, Math.round(rate * duration))
const warmupCount = Math.round(rate * warmup)
const interval = 1000 / rate
const perTarget = Math.max(1, Math.floor(connections / targets.length))
const payload = body === undefined ? undefined : Buffer.from(body)
const sentHeaders = payload === undefined ? headers : { ...headers, 'content-length': String(payload.length) }

// Latencies in a preallocated array: recording one makes no garbage for the collector to pause on.
const latencies = new Float64Array(total)
let answered = 0
let errors = 0
let non2xx = 0
let lateSum = 0
let lateMax = 0
let sent = 0

function record (scheduled, status) {
  if (scheduled < measuredFrom) return
  latencies[answered++] = performance.now() - scheduled
  if (status < 200 || status >= 300) non2xx++
}

/** Milliseconds this process's threads have waited on a run queue (Linux's schedstat), NaN elsewhere. */
function runQueueWaitMs () {
  try {
    let total = 0
    for (const task of fs.readdirSync('/proc/self/task')) total += Number(fs.readFileSync(`/proc/self/task/${task}/schedstat`, 'utf8').split(' ')[1])
    return total / 1e6
  } catch {
    return NaN
  }
}

function fail (scheduled) {
  if (scheduled >= measuredFrom) errors++
}

// undici is not a dependency of the service: it comes with the dev tools (tap's), and is loaded
// only when asked for.
const Pool = client === 'undici' ? (await import('undici')).Pool : undefined

/** One sender per target: send(scheduled) sends a request whose schedule was `scheduled`. */
const senders = targets.map((target) => {
  if (client === 'net') {
    return netSender(target, { path, method, headers: sentHeaders, body: payload, connections: perTarget, done: record, fail })
  }
  if (client === 'undici') {
    const pool = new Pool(target, { connections: perTarget, pipelining: 1 })
    return {
      send (scheduled) {
        pool.request({ path, method, headers: sentHeaders, body: payload }).then(async ({ statusCode, body }) => {
          await body.dump({ limit: Infinity })
          record(scheduled, statusCode)
        }, () => fail(scheduled))
      },
      close: () => pool.destroy()
    }
  }
  const url = new URL(target)
  const agent = new http.Agent({ keepAlive: true, maxSockets: perTarget })
  const requestOptions = { host: url.hostname, port: url.port, path, method, headers: sentHeaders, agent }
  return {
    send (scheduled) {
      const request = http.request(requestOptions, (response) => {
        response.on('end', () => record(scheduled, response.statusCode))
        response.on('error', () => fail(scheduled))
        response.resume()
      })
      request.on('error', () => fail(scheduled))
      request.end(payload)
    },
    close: () => agent.destroy()
  }
})

const warmupStart = performance.now() + 10
const start = warmupStart + warmupCount * interval
const measuredFrom = start - interval / 2
let cpuBefore
let waitBefore
let next = -warmupCount

// Sends every request whose time has come, then sleeps until the next one's. Node's timers have a
// resolution of a millisecond, so a request may leave up to about a millisecond late; how late
// each left is measured and reported, and counts in its latency.
function tick () {
  const now = performance.now()
  while (next < total) {
    const scheduled = start + next * interval
    if (scheduled > now) break
    if (next === 0) {
      cpuBefore = process.cpuUsage()
      waitBefore = runQueueWaitMs()
    }
    if (next >= 0) {
      const late = performance.now() - scheduled
      lateSum += late
      if (late > lateMax) lateMax = late
      sent++
    }
    senders[(next + warmupCount) % senders.length].send(scheduled)
    next++
  }
  if (next < total) setTimeout(tick, Math.max(0, start + next * interval - performance.now()))
  else finish()
}

function finish () {
  const sendingEnded = performance.now()
  const deadline = sendingEnded + grace * 1000
  const check = () => {
    if (answered + errors < sent && performance.now() < deadline) {
      setTimeout(check, 5)
      return
    }
    const ended = performance.now()
    const waited = runQueueWaitMs() - waitBefore
    const cpu = process.cpuUsage(cpuBefore)
    const cpuMicros = cpu.user + cpu.system
    // A request still unanswered has waited at least from the end of the sending to now: it counts
    // with that, a lower bound, rather than leaving the percentiles to the answered ones only.
    const unanswered = Math.max(0, sent - answered - errors)
    const counted = answered + unanswered
    const sorted = new Float64Array(counted)
    sorted.set(latencies.subarray(0, answered))
    sorted.fill(ended - sendingEnded, answered)
    sorted.sort()
    const at = (q) => counted === 0 ? NaN : sorted[Math.min(counted - 1, Math.ceil(q * counted) - 1)]
    const round = (ms) => Number(ms.toFixed(3))
    const result = {
      client,
      rate,
      sent,
      answered,
      errors,
      non2xx,
      // Requests neither answered nor failed by the end of the grace: a server that stopped answering.
      unanswered,
      sentRate: round(sent / ((sendingEnded - start) / 1000)),
      answeredRate: round(answered / ((ended - start) / 1000)),
      p50: round(at(0.5)),
      p99: round(at(0.99)),
      p999: round(at(0.999)),
      max: round(counted === 0 ? NaN : sorted[counted - 1]),
      lateMeanMs: round(lateSum / Math.max(1, sent)),
      lateMaxMs: round(lateMax),
      cpuMicrosPerRequest: round(cpuMicros / Math.max(1, sent)),
      cpuShare: round(cpuMicros / 1000 / (ended - start)),
      // Milliseconds this process's threads were runnable but waited for a core, per second.
      runQueueWaitMsPerS: round(waited / ((ended - start) / 1000))
    }
    // Could not keep the schedule: near a full core, or late by more than 2 ms on average (a timer
    // fires up to a millisecond after its time, so a generator that keeps up is 0.5–1 ms late).
    result.starved = result.lateMeanMs > 2 || result.cpuShare > 0.9
    process.stdout.write(JSON.stringify(result) + '\n')
    for (const sender of senders) sender.close()
  }
  check()
}

setTimeout(tick, Math.max(0, warmupStart - performance.now()))
