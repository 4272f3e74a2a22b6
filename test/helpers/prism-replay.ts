import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import fc from 'fast-check'
import { requestGenerator, type Document } from './openapi-requests.js'
import { projectRoot } from '../../lib/project-root.js'

/**
 * Not part of `npm test`: replays the traffic of check 4b (the same generated requests) over HTTP
 * through a proxy that validates it against client/openapi.json, such as Prism in proxy mode, and
 * sums up the violations it reports in its `sl-violations` header, on requests it found valid and
 * on the others. Prism: `prism proxy client/openapi.json http://127.0.0.1:3000 -p 4010` (it runs
 * from npm, on a newer Node than the service's if need be), then:
 *
 *   PROXY_URL=http://127.0.0.1:4010 RUNS=500 node --import=tsx test/prism-replay.ts
 */
interface Violation { location?: string[], severity?: string | number, code?: string, message?: string }

const proxy = process.env.PROXY_URL ?? 'http://127.0.0.1:4010'
const runs = Number(process.env.RUNS ?? 500)
const document = JSON.parse(fs.readFileSync(path.join(projectRoot, 'client', 'openapi.json'), 'utf8')) as Document
// The server behind the proxy runs with API_TOKENS=generated-client, the setting of client/openapi.json.
const requestsOf = requestGenerator(document, { basic: 'servant:server', bearer: 'generated-client' }, { 'getUserStream.count': 1000 })

/** A request over HTTP/1.1 (fetch sends no body with GET; GET /b takes one): its status and headers. */
function send (request: { method: string, url: string, headers: Record<string, string>, body?: string }) {
  return new Promise<http.IncomingMessage>((resolve, reject) => {
    const req = http.request(proxy + request.url, { method: request.method, headers: request.headers }, (res) => {
      res.resume()
      res.on('end', () => resolve(res))
    })
    req.on('error', reject)
    req.end(request.body)
  })
}

let sent = 0
let validRequests = 0
const onValid: string[] = []
const onInvalid = new Map<string, number>()
for (const [template, item] of Object.entries(document.paths)) {
  for (const method of Object.keys(item)) {
    for (const request of fc.sample(requestsOf(method, template), { numRuns: runs, seed: 1797 })) {
      sent++
      const res = await send(request)
      const violations = JSON.parse(String(res.headers['sl-violations'] ?? '[]')) as Violation[]
      const invalidRequest = violations.some((violation) => violation.location?.[0] === 'request')
      if (!invalidRequest) validRequests++
      for (const violation of violations.filter((v) => v.location?.[0] !== 'request')) {
        const what = `${request.method} ${template} → ${res.statusCode}: ${violation.location?.join('.')} ${violation.message}`
        if (invalidRequest) onInvalid.set(what, (onInvalid.get(what) ?? 0) + 1)
        else onValid.push(`${what} (${request.url} ${JSON.stringify(request.headers)} → ${String(res.headers['content-type'])})`)
      }
    }
  }
}
console.log(JSON.stringify({
  sent,
  validRequests,
  responseViolationsOnValidRequests: onValid.length,
  examples: [...new Set(onValid)].slice(0, 20),
  responseViolationsOnInvalidRequests: Object.fromEntries(onInvalid)
}, null, 2))
