import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { serverEntry } from '../helpers/index.js'

// lib/tracing.ts as the production bundle (dist/bundle/) holds and runs it: tracing off leaves
// none of OpenTelemetry in it, and an endpoint that is no URL stops the entry, a process of its
// own whose exit and stderr are read. In this process: test/lib/tracing.test.ts.

t.test('the production bundle holds none of it: tracing off, the start reads no more than before', async (t) => {
  const bundle = fs.readFileSync(path.join(path.dirname(serverEntry), 'service.cjs'), 'utf8')
  t.ok(bundle.includes('"dist/lib/tracing.js"'), 'lib/tracing.ts is in it')
  t.notMatch(bundle, /"node_modules\/(@fastify\/otel|@opentelemetry\/(?!api\/)|require-in-the-middle|import-in-the-middle)/, 'no module of the SDK, the exporter or the instrumentations (@opentelemetry/api is prom-client\'s)')
})

t.test('an endpoint that is no URL stops the production entry, naming the variable', async (t) => {
  const run = spawnSync(process.execPath, [serverEntry], {
    env: { PATH: process.env.PATH, PORT: '0', OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' },
    encoding: 'utf8',
    timeout: 30_000
  })
  t.equal(run.status, 1, 'exit 1')
  t.equal(run.stderr.trim(), 'Invalid configuration: env/OTEL_EXPORTER_OTLP_ENDPOINT: expected an http:// or https:// URL, not "collector:4318"')
})
