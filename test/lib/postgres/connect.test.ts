import net from 'node:net'
import pg from 'pg'
import t, { type Test } from 'tap'
import { loadConfig } from '../../../lib/config/load.js'
import { connectWithRetries, connectionParameters, isStartupParameterRefusal, redactedUrl } from '../../../lib/postgres/connect.js'
import { testPostgres } from '../../helpers/postgres.js'

t.test('redactedUrl', async (t) => {
  t.equal(redactedUrl('postgres://app:s3cret@db:5432/app'), 'postgres://app:***@db:5432/app', 'the password masked')
  t.equal(redactedUrl('postgresql://db/app'), 'postgresql://db/app', 'nothing to mask')
  t.equal(redactedUrl('postgres://db/app?user=postgres&password=SECRET'), 'postgres://db/app?user=postgres&password=***', 'a password in the query string')
  t.equal(redactedUrl('postgres://u:one@db/app?sslmode=require&sslpassword=two&PASSWORD=three'),
    'postgres://u:***@db/app?sslmode=require&sslpassword=***&PASSWORD=***', 'every form of it')
  t.equal(redactedUrl('postgres://[db'), 'the database of DATABASE_URL', 'a URL that does not parse is not echoed')
})

t.test('connectionParameters: statement_timeout, as the pool sets it, but for DATABASE_POOLER=transaction', async (t) => {
  t.same(connectionParameters(loadConfig({ DATABASE_STATEMENT_TIMEOUT: '1234' })), { statement_timeout: 1234 })
  t.same(connectionParameters(loadConfig({ DATABASE_POOLER: 'transaction' })), {})
})

/**
 * A server that ends every connection as PgBouncer ends one whose startup packet sets a parameter
 * it does not handle: an ErrorResponse (FATAL, SQLSTATE 08P01, `unsupported startup parameter:
 * <name>`) in place of the authentication request, then the connection closed. Only what the
 * driver reads at start-up is spoken; test/system/pgbouncer/ has the real one.
 */
async function refusingPooler (t: Test): Promise<{ port: number, connections: () => number }> {
  let connections = 0
  const field = (type: string, value: string) => Buffer.concat([Buffer.from(type), Buffer.from(value), Buffer.from([0])])
  const server = net.createServer((socket) => {
    connections++
    socket.once('data', () => {
      const body = Buffer.concat([field('S', 'FATAL'), field('V', 'FATAL'), field('C', '08P01'),
        field('M', 'unsupported startup parameter: statement_timeout'), Buffer.from([0])])
      const length = Buffer.alloc(4)
      length.writeUInt32BE(body.length + 4)
      socket.end(Buffer.concat([Buffer.from('E'), length, body]))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => server.close())
  return { port: (server.address() as net.AddressInfo).port, connections: () => connections }
}

t.test('a pooler\'s refusal of a parameter set when connecting: recognised, not retried, and the setting that fixes it named', async (t) => {
  const pooler = await refusingPooler(t)
  const url = `postgres://app:hunter2@127.0.0.1:${pooler.port}/app`
  const config = loadConfig({ DATABASE_URL: url, DATABASE_STARTUP_TIMEOUT: '60000' })
  const retries: unknown[] = []
  const failed = await connectWithRetries(config, { warn: (fields: unknown) => retries.push(fields) }, url, connectionParameters(config))
    .then(() => undefined, (err: Error) => err)
  t.equal(failed?.message, `The database at postgres://app:***@127.0.0.1:${pooler.port}/app is behind a pooler that refuses parameters set when connecting (unsupported startup parameter: statement_timeout): set DATABASE_POOLER=transaction`)
  t.same(retries, [], 'no passing outage: not retried for DATABASE_STARTUP_TIMEOUT')
  t.equal(pooler.connections(), 1, 'one connection')
})

t.test('isStartupParameterRefusal: PgBouncer\'s refusal alone', async (t) => {
  const refusal = Object.assign(new Error('unsupported startup parameter: statement_timeout'), { code: '08P01' })
  t.ok(isStartupParameterRefusal(refusal))
  t.notOk(isStartupParameterRefusal(Object.assign(new Error('invalid message length'), { code: '08P01' })), 'another protocol violation')
  t.notOk(isStartupParameterRefusal(Object.assign(new Error('unsupported startup parameter: statement_timeout'), { code: '57P01' })), 'another code')
  t.notOk(isStartupParameterRefusal(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })), 'no server')
})

t.test('a wrong password, a missing role, one that may not log in, a missing database: said at once with the fix, not retried as "unreachable"', async (t) => {
  const database = new URL(await (await testPostgres()).createDatabase())
  const admin = new pg.Client(database.href)
  await admin.connect()
  const role = `locked_${process.pid}`
  await admin.query(`CREATE ROLE ${role} NOLOGIN PASSWORD 'locked-password'`)
  t.teardown(async () => {
    await admin.query(`DROP ROLE ${role}`)
    await admin.end()
  })
  const password = 'refused the user and password of DATABASE_URL: give DATABASE_URL a role of the database and its password'
  const cases = [
    { what: 'a wrong password', url: Object.assign(new URL(database), { password: 'wrong' }), says: password, reason: /password authentication failed/ },
    { what: 'a missing role', url: Object.assign(new URL(database), { username: 'nobody' }), says: password, reason: /"nobody"/ },
    { what: 'a role that may not log in', url: Object.assign(new URL(database), { username: role, password: 'locked-password' }), says: 'refused the role of DATABASE_URL: let it log in (ALTER ROLE … LOGIN) from this host, or name in DATABASE_URL one that may', reason: /not permitted to log in/ },
    { what: 'a missing database', url: Object.assign(new URL(database), { pathname: '/nowhere' }), says: 'has no such database: create it (CREATE DATABASE …), or name in DATABASE_URL the database the service uses', reason: /database "nowhere" does not exist/ }
  ]
  for (const { what, url, says, reason } of cases) {
    const config = loadConfig({ DATABASE_URL: url.href, DATABASE_STARTUP_TIMEOUT: '60000' })
    const retries: unknown[] = []
    const failed = await connectWithRetries(config, { warn: (fields: unknown) => retries.push(fields) }, url.href).then(() => undefined, (err: Error) => err)
    t.ok(failed?.message.startsWith(`The database at ${redactedUrl(url.href)} ${says} (`), `${what}: ${failed?.message}`)
    t.match(failed?.message, reason, `${what}: PostgreSQL's reason`)
    t.same(retries, [], `${what}: not retried for DATABASE_STARTUP_TIMEOUT`)
  }
  const migration = Object.assign(new URL(database), { password: 'wrong' }).href
  const failed = await connectWithRetries(loadConfig({ DATABASE_URL: database.href, DATABASE_MIGRATION_URL: migration }), { warn () {} }, migration).then(() => undefined, (err: Error) => err)
  t.match(failed?.message, 'refused the user and password of DATABASE_MIGRATION_URL', 'the setting of the URL that failed is named')
})
