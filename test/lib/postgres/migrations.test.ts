import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import pg from 'pg'
import t from 'tap'
import { loadConfig } from '../../../lib/config/load.js'
import { REWORDED_MIGRATIONS, migrate, migrateDatabase, prepareDatabase, schemaVersions } from '../../../lib/postgres/migrations.js'
import { SAMPLE_USERS } from '../../../schemas/user.js'
import { testPostgres, unprivilegedUrl } from '../../helpers/postgres.js'

t.test('the migrations', async (t) => {
  const server = await testPostgres()
  const log = { info () {} }

  t.test('migrations: applied once, logged, and a second run does nothing', async (t) => {
    const url = await server.createDatabase()
    const client = new pg.Client(url)
    await client.connect()
    t.teardown(() => client.end())
    const logged: unknown[] = []
    const logger = { info: (fields: object, msg?: string) => { logged.push({ ...fields, msg }) } }
    await migrate(client, logger)
    t.same(logged, [
      { version: 1, name: 'collections', msg: 'database migration applied' },
      { version: 2, name: 'sample-users', msg: 'database migration applied' },
      { version: 3, name: 'auth-failures', msg: 'database migration applied' },
      { version: 4, name: 'lists', msg: 'database migration applied' },
      { version: 5, name: 'collection-room', msg: 'database migration applied' }
    ])
    await migrate(client, logger)
    t.equal(logged.length, 5, 'nothing more the second time')
    const { rows } = await client.query('SELECT id, item FROM users ORDER BY id')
    t.same(rows, [{ id: '1', item: SAMPLE_USERS[0] }, { id: '2', item: SAMPLE_USERS[1] }], 'the sample users once, as 1 and 2')
  })

  t.test('migrateDatabase (the release step): DATABASE_MIGRATION_URL before DATABASE_URL; the version after; nothing to migrate is said', async (t) => {
    const migrating = await server.createDatabase()
    const serving = await server.createDatabase()
    const quiet = { info () {}, warn () {} }
    const config = loadConfig({ DATABASE_URL: serving, DATABASE_MIGRATION_URL: migrating })
    t.equal(await migrateDatabase(config, quiet), 5, 'at the latest migration')
    const version = async (url: string) => {
      const client = new pg.Client(url)
      await client.connect()
      try {
        return (await schemaVersions(client)).database
      } finally {
        await client.end()
      }
    }
    t.equal(await version(migrating), 5, 'the migration URL\'s database was migrated')
    t.equal(await version(serving), 0, 'the service\'s was not')
    t.equal(await migrateDatabase(loadConfig({ DATABASE_URL: serving }), quiet), 5, 'without one, DATABASE_URL\'s')
    await t.rejects(migrateDatabase(loadConfig({}), quiet), { code: 'API_ERR_NO_DATABASE' })
  })

  t.test('migrations as a role that may not create in schema public: the settings that run them as one that may are named', async (t) => {
    const database = await server.createDatabase()
    const app = await unprivilegedUrl(t, database)
    const quiet = { info () {}, warn () {} }
    const denied = 'may not change the schema (permission denied for schema public)'
    const role = new URL(app).username
    await t.rejects(prepareDatabase(loadConfig({ DATABASE_URL: app }), quiet), {
      message: `The role ${role} of DATABASE_URL ${denied}: set DATABASE_MIGRATION_URL to a role that may (the schema's owner), or apply the migrations as such a role with \`npm run migrate\` (\`node dist/bundle/server.js migrate\` in the image) and start with MIGRATE_ON_START=false`
    }, 'at start: the migration role, or the release step')
    await t.rejects(migrateDatabase(loadConfig({ DATABASE_URL: app }), quiet), {
      message: `The role ${role} of DATABASE_URL ${denied}: set DATABASE_MIGRATION_URL to a role that may (the schema's owner)`
    }, 'the release step itself: the migration role')
    await t.rejects(migrateDatabase(loadConfig({ DATABASE_URL: database, DATABASE_MIGRATION_URL: app }), quiet), {
      message: `The role ${role} of DATABASE_MIGRATION_URL ${denied}: give DATABASE_MIGRATION_URL a role that owns the schema (deploy/README.md has the grants)`
    }, 'a migration role that may not either')
    // Either way out named: the owner's role as DATABASE_MIGRATION_URL, or the migrations applied
    // before and MIGRATE_ON_START=false; the service's role with the grants of deploy/README.md.
    await prepareDatabase(loadConfig({ DATABASE_URL: app, DATABASE_MIGRATION_URL: database }), quiet)
    const admin = new pg.Client(database)
    await admin.connect()
    await admin.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${role}`)
    await admin.end()
    await prepareDatabase(loadConfig({ DATABASE_URL: app, MIGRATE_ON_START: 'false' }), quiet)
    t.pass('with DATABASE_MIGRATION_URL, or MIGRATE_ON_START=false after the migrations, the service\'s role starts')
  })

  t.test('migrations: a database that ran the former wording of 001 and 002 starts; any other text of them is refused', async (t) => {
    const url = await server.createDatabase()
    const client = new pg.Client(url)
    await client.connect()
    t.teardown(() => client.end())
    await migrate(client, log)
    const records = async () => (await client.query('SELECT version::int, md5 FROM schemaversion WHERE version <= 2 ORDER BY version')).rows
    const present = await records()
    // As a database migrated before the rewording holds them.
    for (const [version, md5] of REWORDED_MIGRATIONS) await client.query('UPDATE schemaversion SET md5 = $1 WHERE version = $2', [md5, version])
    await migrate(client, log)
    t.same(await records(), present, 'the former checksums carried forward to the files\' present ones')
    await client.query('UPDATE schemaversion SET md5 = $1 WHERE version = 1', ['0123456789abcdef0123456789abcdef'])
    await t.rejects(migrate(client, log), /MD5 checksum failed for migration \[1\]/, 'a text that is neither is refused')
  })

  t.test('migrations: replicas starting together apply each once', async (t) => {
    const url = await server.createDatabase()
    const clients = Array.from({ length: 6 }, () => new pg.Client(url))
    await Promise.all(clients.map((client) => client.connect()))
    t.teardown(() => Promise.all(clients.map((client) => client.end())))
    await Promise.all(clients.map((client) => migrate(client, log)))
    const [client] = clients
    t.same((await client!.query('SELECT version FROM schemaversion ORDER BY version')).rows.map((row) => row.version), ['0', '1', '2', '3', '4', '5'])
    t.same((await client!.query('SELECT item FROM users ORDER BY id')).rows.map((row) => row.item), SAMPLE_USERS, 'two users, not twelve')
  })

  t.test('migrations: a failure leaves nothing half-applied', async (t) => {
    const url = await server.createDatabase()
    const client = new pg.Client(url)
    await client.connect()
    t.teardown(() => client.end())
    // A table in the way of migration 001: it fails, and 001's other table is not left behind.
    await client.query('CREATE TABLE products (x int)')
    await t.rejects(migrate(client, log), /relation "products" already exists/)
    await t.rejects(migrateDatabase(loadConfig({ DATABASE_URL: url }), { info () {}, warn () {} }), { message: 'relation "products" already exists' },
      'the release step says it as it is: no privilege is missing')
    t.same((await client.query("SELECT to_regclass('users') AS users, to_regclass('schemaversion') AS versions")).rows,
      [{ users: null, versions: null }], 'rolled back')
    await client.query('DROP TABLE products')
    await migrate(client, log)
    t.equal((await client.query('SELECT count(*)::int AS n FROM users')).rows[0].n, 2, 'and it can be run again')
  })
})

t.test('released migrations never change (but for the comments of REWORDED_MIGRATIONS, carried forward)', async (t) => {
  const dir = path.join(import.meta.dirname, '..', '..', '..', 'migrations')
  const released: Record<string, string> = {
    '001.do.collections.sql': '87acb2d0c9c8217b9308538f19cd7f61',
    '002.do.sample-users.sql': '74dd1ab7e643fc8b640534af6526c704',
    '003.do.auth-failures.sql': '4b7ac0ca6285d0ae28292c09975c8e57',
    '004.do.lists.sql': '6168d62341ac12e5a1f719df9b944b5b',
    '005.do.collection-room.sql': '0ee77655dd9e31cf746d2e10c0cae4c7'
  }
  for (const [file, md5] of Object.entries(released)) {
    t.equal(createHash('md5').update(fs.readFileSync(path.join(dir, file), 'utf8')).digest('hex'), md5, `${file}: a change is a new file (migrations/README.md)`)
  }
})
