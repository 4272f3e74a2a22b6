// lib/postgres/repository.ts behind Debian's pgbouncer in transaction pooling mode, which
// DATABASE_POOLER=transaction is for. In the system tier (`npm run test:system`; `npm run
// check:pgbouncer` runs test/system/pgbouncer/ alone); without pgbouncer the test fails, naming it.
import pg from 'pg'
import t from 'tap'
import { migrate } from '../../../lib/postgres/migrations.js'
import { postgresRepository } from '../../../lib/postgres/repository.js'
import { startPgBouncer } from '../../helpers/pgbouncer.js'
import { testPostgres } from '../../helpers/postgres.js'
import type { Item } from '../../helpers/repository-contract.js'

t.test('through a transaction-pooling pgbouncer: unnamed statements work, named ones break', async (t) => {
  const server = await testPostgres()
  const direct = await server.createDatabase()
  const setup = new pg.Client(direct)
  await setup.connect()
  await migrate(setup, { info () {} })
  await setup.end()
  // Two server connections for eight clients: a client's next statement may run on either.
  const bouncer = await startPgBouncer(server.port, { poolSize: 2 })
  t.teardown(() => bouncer.stop())
  const pool = new pg.Pool({ connectionString: bouncer.url(new URL(direct).pathname.slice(1)), max: 8 })
  pool.on('error', () => {})
  t.teardown(() => pool.end())
  // Reads of one repository made together share a statement (Batcher): 200 repositories of the
  // same statements send 200 at once, over the pool's eight connections.
  const reads = (namedStatements: boolean) =>
    Promise.allSettled(Array.from({ length: 200 }, (_, i) => postgresRepository<Item>(pool, 'users', { namedStatements }).get(1 + (i % 2))))

  const unnamed = await reads(false)
  t.same(unnamed.filter((outcome) => outcome.status === 'rejected'), [], '200 reads, every one answered')
  const named = await reads(true)
  t.match(named.find((outcome) => outcome.status === 'rejected'), { reason: { message: /prepared statement .* (does not exist|already exists)/ } },
    'named: a statement prepared on one server connection is asked of another')

  // A parameter set when connecting is refused by the pooler: the service sends none behind it.
  const withTimeout = new pg.Client({ connectionString: bouncer.url('postgres'), statement_timeout: 1000 })
  await t.rejects(withTimeout.connect(), /unsupported startup parameter: statement_timeout/)
})
