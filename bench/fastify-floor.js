// The framework's own floor: a bare Fastify app (same logger level as the service, no plugins, no
// validation) answering each known path with the same bytes as raw-server.js. Comparing it with
// raw node:http shows what Fastify itself costs; the service's gap beyond it is ours.
import Fastify from 'fastify'

const fixtures = JSON.parse(Buffer.from(process.env.FIXTURES ?? 'e30=', 'base64').toString('utf8'))
const app = Fastify({ logger: { level: process.env.LOG_LEVEL ?? 'warn' } })
app.get('/health', async () => ({ status: 'ok' }))
for (const [path, { status, headers, body }] of Object.entries(fixtures)) {
  const bytes = Buffer.from(body, 'base64')
  app.get(path.split('?')[0], (_request, reply) => { reply.code(status).headers(headers).send(bytes) })
}
await app.listen({ port: Number(process.env.PORT), host: process.env.HOST })
