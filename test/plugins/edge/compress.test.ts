import fs from 'node:fs'
import http, { type IncomingMessage } from 'node:http'
import { createRequire } from 'node:module'
import path from 'node:path'
import zlib from 'node:zlib'
import { Readable } from 'node:stream'
import t from 'tap'
import { Type } from '@sinclair/typebox'
import { baseUrl, build, buildPlugins } from '../../helpers/index.js'

const ADA = { name: 'Ada Lovelace', age: 36, email: 'ada@engine.org', registration_date: '1843-07-01' }
const swaggerUiStatic = path.join(path.dirname(createRequire(import.meta.url).resolve('@fastify/swagger-ui')), 'static')

const decoders: Record<string, (body: Buffer) => Buffer> = {
  gzip: zlib.gunzipSync,
  br: zlib.brotliDecompressSync,
  deflate: zlib.inflateSync
}

t.test('the description page, Swagger UI\'s assets and long lists are compressed for clients that accept it', async (t) => {
  const app = await build(t)
  const plainDocs = (await app.inject({ url: '/docs' })).rawPayload
  for (const [encoding, decode] of Object.entries(decoders)) {
    const res = await app.inject({ url: '/docs', headers: { 'accept-encoding': encoding } })
    t.equal(res.headers['content-encoding'], encoding, `/docs: ${encoding}`)
    t.match(res.headers.vary, /accept-encoding/i)
    t.same(decode(res.rawPayload), plainDocs, `/docs: ${encoding} decodes to the page`)
    t.ok(res.rawPayload.length < plainDocs.length / 3, `/docs: ${plainDocs.length} → ${res.rawPayload.length} bytes`)
  }

  const bundle = fs.readFileSync(path.join(swaggerUiStatic, 'swagger-ui-bundle.js'))
  const res = await app.inject({ url: '/documentation/static/swagger-ui-bundle.js', headers: { 'accept-encoding': 'gzip, deflate, br' } })
  t.equal(res.headers['content-encoding'], 'br', 'Brotli first when the client takes it')
  t.ok(res.rawPayload.length < bundle.length / 3, `Swagger UI's bundle: ${bundle.length} → ${res.rawPayload.length} bytes`)
  t.same(zlib.brotliDecompressSync(res.rawPayload), bundle)

  for (let i = 0; i < 20; i++) {
    await app.inject({ method: 'POST', url: '/users', headers: { 'content-type': 'application/json' }, payload: ADA })
  }
  const list = await app.inject({ url: '/users', headers: { 'accept-encoding': 'gzip' } })
  t.equal(list.headers['content-encoding'], 'gzip', 'a list of 22 users')
  t.equal(JSON.parse(zlib.gunzipSync(list.rawPayload).toString()).length, 22)
})

t.test('small answers, and clients that do not ask, get the bytes as they are', async (t) => {
  const app = await build(t)
  const hello = await app.inject({ url: '/hello', headers: { 'accept-encoding': 'gzip, br' } })
  t.notOk(hello.headers['content-encoding'], 'a 30-byte answer is not worth it')
  t.equal(hello.body, '{"msg":"Hello, anonymous coward"}')
  const docs = await app.inject({ url: '/docs' })
  t.notOk(docs.headers['content-encoding'], 'no Accept-Encoding: plain')
  t.match(docs.body, /^# servant-example-api/)
})

t.test('COMPRESSION=false: nothing is compressed (the proxy does it)', async (t) => {
  const app = await build(t, { COMPRESSION: 'false' })
  for (const url of ['/docs', '/documentation/static/swagger-ui-bundle.js']) {
    const res = await app.inject({ url, headers: { 'accept-encoding': 'gzip, br' } })
    t.equal(res.statusCode, 200)
    t.notOk(res.headers['content-encoding'], url)
  }
})

/** GETs `url` asking for `encoding`, the response and its body decoded as a stream. */
function getDecoded (url: string, encoding: 'gzip' | 'br', accept = '*/*'): Promise<{ res: IncomingMessage, body: Readable }> {
  return new Promise((resolve, reject) => {
    http.get(url, { agent: false, headers: { 'accept-encoding': encoding, accept } }, (res) => {
      const decoder = encoding === 'gzip' ? zlib.createGunzip() : zlib.createBrotliDecompress()
      resolve({ res, body: res.pipe(decoder) })
    }).on('error', reject)
  })
}

t.test('a compressed NDJSON stream: each line reaches the client as soon as it is produced', async (t) => {
  let produce = () => {}
  const app = await buildPlugins(t, (server) => {
    const Item = Type.Object({ n: Type.Integer(), name: Type.String() })
    server.get('/slow', { schema: { produces: ['application/x-ndjson', 'application/json'] } }, async (_request, reply) =>
      reply.ndjson((async function * () {
        for (let n = 1; n <= 3; n++) {
          yield { n, name: 'Isaac Newton' }
          // The next line is produced only once the client has read this one.
          await new Promise<void>((resolve) => { produce = resolve })
        }
      })(), Item))
  })
  await app.listen({ port: 0, host: '127.0.0.1' })

  for (const [encoding, accept] of [['gzip', 'application/x-ndjson'], ['br', 'application/json']] as const) {
    const { res, body } = await getDecoded(`${baseUrl(app)}/slow`, encoding, accept)
    t.equal(res.headers['content-encoding'], encoding, `${accept}: compressed`)
    // Were a line held back until more are produced, none would come: fail then, in 10 s.
    const stuck = setTimeout(() => body.destroy(new Error('a produced line did not reach the client')), 10_000)
    const lines: string[] = []
    let text = ''
    for await (const chunk of body) {
      const complete = (text + String(chunk)).split('\n')
      text = complete.pop() as string
      for (const line of complete) {
        lines.push(line)
        produce()
      }
    }
    clearTimeout(stuck)
    t.same(lines.map((line) => JSON.parse(line).n), [1, 2, 3], `${encoding}: line by line`)
    res.destroy()
  }
})

t.test('GET /userStream, compressed, is the same lines', async (t) => {
  const app = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const plain = (await app.inject({ url: '/userStream?count=1000' })).body
  for (const encoding of ['gzip', 'br'] as const) {
    const { res, body } = await getDecoded(`${baseUrl(app)}/userStream?count=1000`, encoding)
    t.equal(res.headers['content-encoding'], encoding)
    t.equal(res.headers['content-type'], 'application/x-ndjson')
    const chunks: Buffer[] = []
    for await (const chunk of body) chunks.push(chunk as Buffer)
    t.equal(Buffer.concat(chunks).toString(), plain, `${encoding}: every line, complete`)
  }
})

t.test('routes whose answers never reach the threshold, or are always partial (206), run no compression hooks', async (t) => {
  const app = await build(t, { DOCS_CATCH_ALL: 'false' })
  const routes = app.printRoutes({ includeHooks: true, commonPrefix: false, method: 'GET' })
  /** The onSend hooks printed under a route's line. */
  const onSendOf = (route: string) => {
    const lines = routes.split('\n')
    const at = lines.findIndex((line) => line.includes(`${route} (GET`))
    t.not(at, -1, `${route} is printed`)
    return lines.slice(at + 1).find((line) => line.includes('(onSend)')) ?? ''
  }
  for (const route of ['/position/:x/:y', '/persons', '/colors', '/health', '/ready']) {
    t.notMatch(onSendOf(route), /"onSend\(\)"/, `${route}: no @fastify/compress onSend`)
  }
  t.match(onSendOf('/users'), /"onSend\(\)"/, '/users, whose list may be long, has it')
  t.match(onSendOf('/hello'), /"onSend\(\)"/, '/hello, whose name may be long, has it')
})
