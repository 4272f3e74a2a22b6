// The baseline: node:http answering each known path with the bytes the service sends for it.
// FIXTURES (base64 JSON): { "<path>": { status, headers, body (base64) } }. /health is built in.
import http from 'node:http'

const fixtures = JSON.parse(Buffer.from(process.env.FIXTURES ?? 'e30=', 'base64').toString('utf8'))
const responses = new Map(Object.entries(fixtures).map(([path, f]) => [path, { ...f, body: Buffer.from(f.body, 'base64') }]))
responses.set('/health', { status: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from('{"status":"ok"}') })

http.createServer((req, res) => {
  const response = responses.get(req.url)
  if (response === undefined) {
    res.writeHead(404).end()
    return
  }
  res.writeHead(response.status, response.headers)
  res.end(response.body)
}).listen(Number(process.env.PORT), process.env.HOST)
