import zlib from 'node:zlib'
import t from 'tap'
import { PREPARED_ENCODINGS, PreparedBody } from '../../lib/prepared-body.js'

t.test('a prepared body: its bytes, and each coding made once, on first demand', async (t) => {
  const text = JSON.stringify({ text: 'é'.repeat(10_000) })
  const body = new PreparedBody(text)
  t.equal(body.identity.toString('utf8'), text)
  const decode = { br: zlib.brotliDecompressSync, gzip: zlib.gunzipSync, deflate: zlib.inflateSync }
  for (const encoding of PREPARED_ENCODINGS) {
    const first = body.encoded(encoding)
    t.equal(body.encoded(encoding), first, `${encoding}: one promise, whoever asks`)
    const bytes = await first
    t.equal(body.encoded(encoding), bytes, `${encoding}: once made, the bytes themselves`)
    t.ok(bytes.length < body.identity.length / 10, `${encoding}: compressed`)
    t.equal(decode[encoding](bytes).toString('utf8'), text, `${encoding}: the same text`)
  }
})
