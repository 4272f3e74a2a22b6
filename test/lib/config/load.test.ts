import path from 'node:path'
import t from 'tap'
import { InvalidConfiguration, loadConfig, storeChoice } from '../../../lib/config/load.js'
import { projectRoot } from '../../../lib/project-root.js'

/** The lines loadConfig refuses `env` with; none when it accepts it. */
function refused (env: NodeJS.ProcessEnv): readonly string[] {
  try {
    loadConfig(env)
    return []
  } catch (err) {
    if (err instanceof InvalidConfiguration) return err.problems
    throw err
  }
}

t.test('defaults, with nothing set', async (t) => {
  const config = loadConfig({})
  t.match(config, {
    HOST: '127.0.0.1',
    PORT: 3000,
    LOG_LEVEL: 'info',
    BODY_LIMIT: 1048576,
    FILES_DIR: process.cwd(),
    STATIC_DIR: path.join(projectRoot, 'static'),
    DOCS_CATCH_ALL: true,
    AUTH_REALM: 'my-realm',
    BASIC_AUTH_USERS: 'servant:server',
    TRUST_PROXY: 'false',
    NODE_ENV: 'development',
    DATABASE_POOL_SIZE: 10,
    DATABASE_STATEMENT_TIMEOUT: 5000,
    DATABASE_STARTUP_TIMEOUT: 10000,
    SHUTDOWN_DRAIN: 1000,
    SHUTDOWN_GRACE: 9000,
    PRESSURE_MAX_EVENT_LOOP_DELAY: 1000,
    PRESSURE_MAX_EVENT_LOOP_UTILIZATION: 0,
    PRESSURE_MAX_HEAP_USED_BYTES: 0,
    PRESSURE_MAX_RSS_BYTES: 0,
    BASE_PATH: '',
    CORS_ORIGINS: '',
    RATE_LIMIT_MAX: 0,
    RATE_LIMIT_WINDOW_MS: 60_000,
    AUTH_FAILURE_LIMIT: 10,
    AUTH_FAILURE_ADDRESS_LIMIT: 100,
    AUTH_FAILURE_NETWORK_LIMIT: 1000,
    AUTH_FAILURE_WINDOW_MS: 900_000,
    METRICS: true,
    METRICS_HOST: '127.0.0.1',
    METRICS_PORT: 9091,
    STATIC_FOLLOW_SYMLINKS: false,
    STORE: 'memory',
    COMPRESSION: true
  })
  t.equal(config.API_TOKENS, undefined)
  t.equal(config.DATABASE_URL, undefined, 'the memory store')
})

t.test('values are decoded to their types and paths resolved', async (t) => {
  const static_ = t.testdir({ static: {}, data: {} })
  const data = path.relative(process.cwd(), path.join(static_, 'data'))
  const config = loadConfig({
    PORT: '8080',
    BODY_LIMIT: '100',
    DOCS_CATCH_ALL: 'false',
    FILES_DIR: data,
    STATIC_DIR: static_,
    API_TOKENS: 'abc,d.e-f~g+h/i=='
  })
  t.equal(config.PORT, 8080)
  t.equal(config.BODY_LIMIT, 100)
  t.equal(config.DOCS_CATCH_ALL, false)
  t.equal(config.FILES_DIR, path.resolve(data), 'relative to the working directory')
  t.equal(config.STATIC_DIR, static_)
  t.equal(config.API_TOKENS, 'abc,d.e-f~g+h/i==')
})

t.test('production has no default credentials, and refuses the example ones', async (t) => {
  const production = { NODE_ENV: 'production', STORE: 'memory' }
  t.equal(loadConfig(production).BASIC_AUTH_USERS, undefined)
  t.equal(loadConfig({ ...production, BASIC_AUTH_USERS: 'a:b' }).BASIC_AUTH_USERS, 'a:b')
  t.equal(loadConfig({ NODE_ENV: 'test' }).BASIC_AUTH_USERS, 'servant:server')
  for (const users of ['servant:server', 'ops:s3cret,servant:server']) {
    t.same(refused({ ...production, BASIC_AUTH_USERS: users }), ['env/BASIC_AUTH_USERS: the example credentials servant:server are refused in production'])
  }
  t.equal(loadConfig({ ...production, BASIC_AUTH_USERS: 'servant:server2' }).BASIC_AUTH_USERS, 'servant:server2', 'only the very pair')
  t.equal(loadConfig({ NODE_ENV: 'development', BASIC_AUTH_USERS: 'servant:server' }).BASIC_AUTH_USERS, 'servant:server', 'outside production they work')
})

t.test('the store: PostgreSQL with DATABASE_URL; production without one only when STORE=memory says so', async (t) => {
  t.equal(loadConfig({}).STORE, 'memory')
  t.equal(loadConfig({ DATABASE_URL: 'postgres://db/app' }).STORE, 'postgres')
  t.equal(loadConfig({ STORE: 'postgres', DATABASE_URL: 'postgres://db/app' }).STORE, 'postgres')
  t.equal(loadConfig({ NODE_ENV: 'production', DATABASE_URL: 'postgres://db/app' }).STORE, 'postgres')
  t.equal(loadConfig({ NODE_ENV: 'production', STORE: 'memory' }).STORE, 'memory', 'memory in production, said outright')
  t.same(refused({ NODE_ENV: 'production' }), ['env/DATABASE_URL: required in production (or STORE=memory, to keep the data in this process\'s memory, lost when it stops)'], 'no DATABASE_URL in production: refused, one line')
  t.same(refused({ NODE_ENV: 'production', DATABASE_URL: '' }), refused({ NODE_ENV: 'production' }), 'empty is none')
  t.same(refused({ STORE: 'postgres' }), ['env/STORE: postgres needs DATABASE_URL'])
  t.same(refused({ STORE: 'memory', DATABASE_URL: 'postgres://u:secret@db/app' }), ['env/STORE: memory, but DATABASE_URL is set: unset one of them'])
  t.same(refused({ STORE: 'disk' }), ['env/STORE: expected one of "memory", "postgres", not "disk"'])
  t.same(refused({ NODE_ENV: 'production', PORT: 'x' }).map((line) => line.split(':')[0]), ['env/PORT'], 'a setting refused alone is not also blamed on the store')
})

t.test('the client timeouts: headers within the whole request', async (t) => {
  t.match(loadConfig({}), { HEADERS_TIMEOUT: 15_000, REQUEST_TIMEOUT: 30_000, MAX_CONNECTIONS: 0 })
  t.match(loadConfig({ HEADERS_TIMEOUT: '5000', REQUEST_TIMEOUT: '5000' }), { HEADERS_TIMEOUT: 5000, REQUEST_TIMEOUT: 5000 })
  t.same(refused({ HEADERS_TIMEOUT: '40000' }), ['env/HEADERS_TIMEOUT: must not be longer than REQUEST_TIMEOUT (30000), not "40000"'])
})

t.test('the drain ends before the grace period, which cuts the process', async (t) => {
  t.match(loadConfig({ SHUTDOWN_DRAIN: '8999', SHUTDOWN_GRACE: '9000' }), { SHUTDOWN_DRAIN: 8999, SHUTDOWN_GRACE: 9000 })
  t.same(refused({ SHUTDOWN_DRAIN: '20000', SHUTDOWN_GRACE: '1000' }),
    ['env/SHUTDOWN_DRAIN: must be shorter than SHUTDOWN_GRACE (1000), by which the process is cut, not "20000"'])
  t.same(refused({ SHUTDOWN_DRAIN: '9000' }), ['env/SHUTDOWN_DRAIN: must be shorter than SHUTDOWN_GRACE (9000), by which the process is cut, not "9000"'], 'as long is too long')
  t.same(refused({ SHUTDOWN_GRACE: '500' }), ['env/SHUTDOWN_DRAIN: must be shorter than SHUTDOWN_GRACE (500), by which the process is cut'], 'the default drain, named without a value it was not given')
})

t.test('the metrics listener never takes the API\'s port', async (t) => {
  t.same(refused({ PORT: '9091' }), ['env/METRICS_PORT: must differ from PORT (9091): the metrics have a listener of their own'])
  t.same(refused({ PORT: '8080', METRICS_PORT: '8080' }), ['env/METRICS_PORT: must differ from PORT (8080): the metrics have a listener of their own, not "8080"'])
  t.equal(loadConfig({ PORT: '9091', METRICS: 'false' }).PORT, 9091, 'no metrics, no listener of theirs')
  t.equal(loadConfig({ PORT: '0', METRICS_PORT: '0' }).METRICS_PORT, 0, 'two free ports, never the same one')
})

t.test('FILES_DIR and STATIC_DIR must be directories that exist', async (t) => {
  const dir = t.testdir({ file: 'text' })
  const missing = path.join(dir, 'missing')
  t.same(refused({ FILES_DIR: missing }), [`env/FILES_DIR: expected a directory: ${missing} does not exist`])
  t.same(refused({ STATIC_DIR: path.join(dir, 'file') }), [`env/STATIC_DIR: expected a directory: ${path.join(dir, 'file')} is not one`])
  t.same(refused({ FILES_DIR: path.join(dir, 'file', 'below') }), [`env/FILES_DIR: expected a directory: ${path.join(dir, 'file', 'below')} cannot be read (ENOTDIR)`])
  t.equal(loadConfig({ FILES_DIR: dir }).FILES_DIR, dir)
})

t.test('TRUST_PROXY=true is refused in production, with what to give instead', async (t) => {
  const production = { NODE_ENV: 'production', STORE: 'memory' }
  const [line, ...more] = refused({ ...production, TRUST_PROXY: 'true' })
  t.same(more, [])
  t.match(line, /^env\/TRUST_PROXY: true is refused in production, .*X-Forwarded-For: give the number of proxies .* or their addresses/)
  for (const value of ['1', '10.0.0.0/8', 'loopback', 'false']) t.equal(loadConfig({ ...production, TRUST_PROXY: value }).TRUST_PROXY, value)
  t.equal(loadConfig({ TRUST_PROXY: 'true' }).TRUST_PROXY, 'true', 'outside production, on a developer\'s machine, it is taken')
})

t.test('METRICS_HOST is HOST unless set; METRICS_PORT a port', async (t) => {
  t.equal(loadConfig({ HOST: '0.0.0.0' }).METRICS_HOST, '0.0.0.0')
  t.equal(loadConfig({ HOST: '0.0.0.0', METRICS_HOST: '10.0.0.5' }).METRICS_HOST, '10.0.0.5')
  t.equal(loadConfig({ METRICS_PORT: '0' }).METRICS_PORT, 0)
  t.same(refused({ METRICS_PORT: '70000' }).map((line) => line.split(':')[0]), ['env/METRICS_PORT'])
})

t.test('the description catch-all: on outside production, off in production, unless set', async (t) => {
  t.equal(loadConfig({}).DOCS_CATCH_ALL, true)
  t.equal(loadConfig({ NODE_ENV: 'test' }).DOCS_CATCH_ALL, true)
  t.equal(loadConfig({ NODE_ENV: 'production', STORE: 'memory' }).DOCS_CATCH_ALL, false)
  t.equal(loadConfig({ NODE_ENV: 'production', STORE: 'memory', DOCS_CATCH_ALL: 'true' }).DOCS_CATCH_ALL, true)
  t.equal(loadConfig({ DOCS_CATCH_ALL: 'false' }).DOCS_CATCH_ALL, false)
})

t.test('DATABASE_URL: a postgres URL; empty is unset', async (t) => {
  t.equal(loadConfig({ DATABASE_URL: 'postgres://u:p@db:5432/app' }).DATABASE_URL, 'postgres://u:p@db:5432/app')
  t.equal(loadConfig({ DATABASE_URL: 'postgresql://db/app' }).DATABASE_URL, 'postgresql://db/app')
  t.equal(loadConfig({ DATABASE_URL: '' }).DATABASE_URL, undefined)
})

t.test('an invalid value is refused with a message naming the variable', async (t) => {
  // The values each setting refuses.
  const invalid: Record<string, string[]> = {
    PORT: ['abc', '70000', '-1'],
    LOG_LEVEL: ['verbose'],
    BODY_LIMIT: ['0', 'lots'],
    DOCS_CATCH_ALL: ['maybe'],
    HOST: [''],
    AUTH_REALM: ['my "realm"'],
    BASIC_AUTH_USERS: ['nocolon', ':nouser', 'a:b,,c:d'],
    API_TOKENS: ['has space', 'a,,b'],
    TRUST_PROXY: ['yes please', 'yes', '10.0.0.0/33', '1.2.3', '::1/129', 'loopback,nope', '10.0.0.1/8/8'],
    NODE_ENV: ['prod', 'Production', ''],
    DATABASE_URL: ['mysql://db/app', 'db:5432'],
    DATABASE_POOL_SIZE: ['0'],
    DATABASE_STATEMENT_TIMEOUT: ['10'],
    DATABASE_STARTUP_TIMEOUT: ['-1'],
    SHUTDOWN_DRAIN: ['soon'],
    SHUTDOWN_GRACE: ['0'],
    PRESSURE_MAX_EVENT_LOOP_DELAY: ['-5'],
    PRESSURE_MAX_EVENT_LOOP_UTILIZATION: ['1.5'],
    PRESSURE_MAX_HEAP_USED_BYTES: ['lots'],
    PRESSURE_MAX_RSS_BYTES: ['1.5'],
    BASE_PATH: ['api', '/api/', '/', '/a b', '/a"b', '//api'],
    CORS_ORIGINS: ['shop.example', 'https://shop.example/', 'https://a.example,,https://b.example'],
    RATE_LIMIT_MAX: ['-1'],
    RATE_LIMIT_WINDOW_MS: ['0'],
    AUTH_FAILURE_LIMIT: ['ten'],
    AUTH_FAILURE_WINDOW_MS: ['0'],
    METRICS: ['maybe'],
    COMPRESSION: ['gzip']
  }
  for (const [name, values] of Object.entries(invalid)) {
    for (const value of values) t.throws(() => loadConfig({ [name]: value }), new RegExp(name), `${name}=${JSON.stringify(value)}`)
  }
})

t.test('a refused value is quoted in the message, but not a credential', async (t) => {
  t.throws(() => loadConfig({ PORT: '70000' }), /env\/PORT: expected integer .*65535, not "70000"/)
  t.throws(() => loadConfig({ LOG_LEVEL: 'verbose' }), /env\/LOG_LEVEL: expected one of "fatal", .*"silent", not "verbose"/)
  for (const [name, value] of [['BASIC_AUTH_USERS', 'admin-secret'], ['API_TOKENS', 'secret token'], ['DATABASE_URL', 'mysql://u:secret@db/app'], ['DATABASE_MIGRATION_URL', 'mysql://u:secret@db/app']] as const) {
    const err = t.throws(() => loadConfig({ [name]: value }), new RegExp(`env/${name}: expected string to match`)) as Error
    t.notMatch(err.message, /secret/, `${name}: its value is not repeated`)
  }
})

t.test('a refusal of a combination names no value: the line says all there is', async (t) => {
  const production = { NODE_ENV: 'production', STORE: 'memory' }
  t.same(refused({ NODE_ENV: 'production' }), ['env/DATABASE_URL: required in production (or STORE=memory, to keep the data in this process\'s memory, lost when it stops)'])
  t.same(refused({ ...production, BASIC_AUTH_USERS: 'servant:server' }), ['env/BASIC_AUTH_USERS: the example credentials servant:server are refused in production'])
  t.match(refused({ ...production, TRUST_PROXY: 'true' }), [/\(10\.0\.0\.0\/8\)$/])
  t.same(refused({ PORT: 'x', STORE: 'postgres' }).map((line) => line.split(':')[0]), ['env/PORT'], 'with a value refused, combinations are not checked')
})

t.test('numbers as Ajv reads them: blank text is not 0, and the refusal says what it must be', async (t) => {
  for (const text of [' ', '', '1x']) t.same(refused({ PORT: text }), [`env/PORT: expected integer, not ${JSON.stringify(text)}`], JSON.stringify(text))
  t.equal(loadConfig({ PORT: ' 8080 ' }).PORT, 8080, 'spaces around a number')
  t.equal(loadConfig({ PORT: '8e3' }).PORT, 8000, 'an exponent')
  const err = t.throws(() => loadConfig({ PORT: 'x' })) as Error
  t.equal(err.name, 'InvalidConfiguration')
})

t.test('TRUST_PROXY lists, METRICS_HOST and the migration URL are checked when loaded', async (t) => {
  t.match(refused({ TRUST_PROXY: '10.0.0.0/99' }), [/^env\/TRUST_PROXY: /])
  t.match(refused({ METRICS_HOST: '' }), [/^env\/METRICS_HOST: expected string length greater or equal to 1/])
  t.match(refused({ DATABASE_MIGRATION_URL: 'mysql://db/app' }), [/^env\/DATABASE_MIGRATION_URL: expected string to match/])
  t.equal(loadConfig({ DATABASE_MIGRATION_URL: 'postgresql://db/app' }).DATABASE_MIGRATION_URL, 'postgresql://db/app')
  t.equal(loadConfig({ BASIC_AUTH_USERS: 'a:b' }).BASIC_AUTH_USERS, 'a:b', 'outside production, given users are kept')
})

t.test('BASE_PATH and CORS_ORIGINS take what a proxy and a browser send', async (t) => {
  for (const value of ['/api', '/api/v1', "/a.b_c~d-e!$&'()*+,;=:@%2F"]) t.equal(loadConfig({ BASE_PATH: value }).BASE_PATH, value)
  for (const value of ['*', 'https://shop.example', 'http://localhost:8080, https://a.example,https://b.example']) {
    t.equal(loadConfig({ CORS_ORIGINS: value }).CORS_ORIGINS, value)
  }
})

t.test('every invalid variable is refused at once, a line each', async (t) => {
  const err = t.throws(() => loadConfig({ PORT: 'abc', LOG_LEVEL: 'loud', TRUST_PROXY: 'yes', METRICS: 'maybe' })) as InvalidConfiguration
  t.type(err, InvalidConfiguration)
  t.same(err.problems.map((line) => line.split(':')[0]), ['env/PORT', 'env/LOG_LEVEL', 'env/METRICS', 'env/TRUST_PROXY'])
  t.equal(err.message.split('\n').length, 4)
  t.ok(err.problems.every((line) => !line.includes('\n')), 'one line each')
})

t.test('storeChoice: the store in use, and which setting chose it', async (t) => {
  t.equal(storeChoice(loadConfig({}), {}), 'memory, as no DATABASE_URL is set: the data lives in this process, and is lost when it stops')
  t.equal(storeChoice(loadConfig({ DATABASE_URL: 'postgres://db/app' }), { DATABASE_URL: 'postgres://db/app' }), 'postgres, as DATABASE_URL is set')
  t.equal(storeChoice(loadConfig({ STORE: 'memory' }), { STORE: 'memory' }), 'memory, as STORE says')
  t.equal(storeChoice(loadConfig({ STORE: 'postgres', DATABASE_URL: 'postgres://db/app' }), { STORE: 'postgres' }), 'postgres, as STORE says')
  t.equal(storeChoice(loadConfig({ DATABASE_URL: '' }), { STORE: '', DATABASE_URL: '' }), 'memory, as no DATABASE_URL is set: the data lives in this process, and is lost when it stops', 'empty is unset')
})
