import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import t, { type Test } from 'tap'
import { assertError, build } from '../helpers/index.js'

const MISSING = 'myfile.txt just isn\'t there, please leave this server alone.'

/** A FILES_DIR of the test's own, removed when the test ends. */
async function filesDir (t: Test): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'myfile-'))
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }))
  return dir
}

function assertMissing (t: Test, res: { statusCode: number, headers: Record<string, unknown>, body: string }, label: string) {
  t.equal(res.statusCode, 404, `${label}: 404`)
  t.equal(res.headers['content-type'], 'text/plain; charset=utf-8', `${label}: plain text`)
  t.equal(res.body, MISSING, `${label}: the exact text`)
}

t.test('GET /myfile.txt: the file\'s text, read again on every request', async (t) => {
  const dir = await filesDir(t)
  const app = await build(t, { FILES_DIR: dir })
  const file = path.join(dir, 'myfile.txt')

  assertMissing(t, await app.inject({ url: '/myfile.txt' }), 'absent')

  await fs.writeFile(file, 'Hello\n')
  const res = await app.inject({ url: '/myfile.txt' })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
  t.equal(res.body, '{"content":"Hello\\n"}')

  await fs.writeFile(file, 'quotes " and \\ backslash, é ✓ 😀\ttab\r\n')
  t.equal((await app.inject({ url: '/myfile.txt' })).body, '{"content":"quotes \\" and \\\\ backslash, é ✓ 😀\\ttab\\r\\n"}', 'changes are seen; JSON-escaped')

  await fs.writeFile(file, '')
  t.equal((await app.inject({ url: '/myfile.txt' })).body, '{"content":""}', 'an empty file is present')

  await fs.writeFile(file, Buffer.from([0x61, 0xff, 0x62]))
  t.equal((await app.inject({ url: '/myfile.txt' })).body, '{"content":"a\uFFFDb"}', 'invalid UTF-8: replacement characters, not an error')

  await fs.rm(file)
  assertMissing(t, await app.inject({ url: '/myfile.txt' }), 'removed again')
})

t.test('FILES_DIR is relative to the working directory', async (t) => {
  const dir = await filesDir(t)
  await fs.writeFile(path.join(dir, 'myfile.txt'), 'relative')
  const app = await build(t, { FILES_DIR: path.relative(process.cwd(), dir) })
  t.equal((await app.inject({ url: '/myfile.txt' })).body, '{"content":"relative"}')
})

t.test('nothing readable by that name is "not there": a directory, a dangling link, a FILES_DIR gone since the start', async (t) => {
  const dir = await filesDir(t)
  await fs.mkdir(path.join(dir, 'myfile.txt'))
  assertMissing(t, await (await build(t, { FILES_DIR: dir })).inject({ url: '/myfile.txt' }), 'a directory')

  const dangling = await filesDir(t)
  await fs.symlink(path.join(dangling, 'nowhere'), path.join(dangling, 'myfile.txt'))
  assertMissing(t, await (await build(t, { FILES_DIR: dangling })).inject({ url: '/myfile.txt' }), 'a dangling symlink')

  // A FILES_DIR that is no directory at start-up is refused then (test/lib/config/load.test.ts); one
  // that goes away, or is replaced by a file, while the service runs leaves the file not there.
  const gone = await filesDir(t)
  const app = await build(t, { FILES_DIR: gone })
  await fs.rm(gone, { recursive: true })
  assertMissing(t, await app.inject({ url: '/myfile.txt' }), 'FILES_DIR removed')
  await fs.writeFile(gone, 'x')
  assertMissing(t, await app.inject({ url: '/myfile.txt' }), 'FILES_DIR replaced by a file')
})

t.test('a file that is there but cannot be read: 500, its cause hidden', async (t) => {
  // A symbolic-link loop cannot be read whoever runs the tests (root reads a chmod 000 file).
  const dir = await filesDir(t)
  await fs.symlink('myfile.txt', path.join(dir, 'myfile.txt'))
  const res = await (await build(t, { FILES_DIR: dir })).inject({ url: '/myfile.txt' })
  assertError(t, res, 500)
  t.equal(JSON.parse(res.body).message, 'Internal Server Error')
  t.notMatch(res.body, /ELOOP|myfile/, 'no detail reaches the client')
})

t.test('406 for an Accept without JSON; HEAD answers', async (t) => {
  const dir = await filesDir(t)
  await fs.writeFile(path.join(dir, 'myfile.txt'), 'Hello\n')
  const app = await build(t, { FILES_DIR: dir })
  assertError(t, await app.inject({ url: '/myfile.txt', headers: { accept: 'text/plain' } }), 406)
  const head = await app.inject({ method: 'HEAD', url: '/myfile.txt' })
  t.equal(head.statusCode, 200)
  t.equal(head.headers['content-type'], 'application/json; charset=utf-8')
  t.equal(head.body, '')
})
