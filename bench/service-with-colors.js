// The service with GET /colors serving BENCH_COLORS generated colours (synthetic-colors.ts), or
// the tutorial's 59 without it: app.ts's plugins and routes but routes/colors/, then the colours
// route (routes/colors/index.ts) given its collection. Both sides of colors.bench.js run this, so
// that they load the same way. It loads dist/ (tsc's output) rather than the bundle.
import fs from 'node:fs'
import path from 'node:path'
import autoload from '@fastify/autoload'
import Fastify from 'fastify'
import { plugins, serverOptions } from '../dist/app.js'
import { loadConfig } from '../dist/lib/config/load.js'
import colors from '../dist/routes/colors/index.js'
import { syntheticColors } from './synthetic-colors.ts'

const count = Number(process.env.BENCH_COLORS ?? 0)
const names = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '..', 'routes', 'colors', 'colors.json'), 'utf8')).map((color) => color.name)
const config = loadConfig()
const server = Fastify(serverOptions(config))
await server.register(async function serviceWithColors (fastify, opts) {
  await plugins(fastify, opts)
  await fastify.register(autoload, { dir: path.join(import.meta.dirname, '..', 'dist', 'routes'), ignorePattern: /^colors$/, options: opts })
  const generated = count > 0 ? syntheticColors(count, names) : undefined
  await fastify.register(colors, { ...opts, prefix: '/colors', colors: generated })
}, { config })
await server.listen({ host: config.HOST, port: config.PORT })
