import t from 'tap'
import { mistypedSettings, unknownSettings, warnUnknownSettings } from '../../../lib/config/unknown-settings.js'

t.test('unknownSettings: the names of a .env that are no setting, with the one they likely meant', async (t) => {
  t.same(unknownSettings(['PORT', 'DATABASE_URL', 'NODE_OPTIONS', 'NODE_EXTRA_CA_CERTS', 'PGSSLMODE', 'OTEL_SERVICE_NAME', 'FASTIFY_PORT', 'TZ', 'GIT_COMMIT']), [], 'settings, and other programs\' variables')
  t.same(unknownSettings(['DATABSE_URL', 'LOG_LEVL', 'port', 'BASIC_AUTH_USER', 'METRIC_PORT', 'COLOUR', 'SOMETHING_ELSE']), [
    { name: 'DATABSE_URL', closest: 'DATABASE_URL' },
    { name: 'LOG_LEVL', closest: 'LOG_LEVEL' },
    { name: 'port', closest: 'PORT' },
    { name: 'BASIC_AUTH_USER', closest: 'BASIC_AUTH_USERS' },
    { name: 'METRIC_PORT', closest: 'METRICS_PORT' },
    { name: 'COLOUR' },
    { name: 'SOMETHING_ELSE' }
  ])
  const warnings: Array<[object, string]> = []
  warnUnknownSettings({ warn: (fields, msg) => { warnings.push([fields, msg]) } }, ['DATABSE_URL', 'PORT', 'COLOUR'])
  t.same(warnings, [
    [{ variable: 'DATABSE_URL', closest: 'DATABASE_URL' }, '.env sets DATABSE_URL, which is no setting of the service: ignored (did you mean DATABASE_URL?)'],
    [{ variable: 'COLOUR', closest: undefined }, '.env sets COLOUR, which is no setting of the service: ignored']
  ])
})

t.test('unknownSettings: other programs\' variables by their whole names; a typo up to a third of the name apart', async (t) => {
  t.same(unknownSettings(['MY_TZ', 'TZ_OFFSET', 'XNODE_OPTIONS']), [{ name: 'MY_TZ' }, { name: 'TZ_OFFSET' }, { name: 'XNODE_OPTIONS' }], 'only whole names are others\'')
  t.same(unknownSettings(['LOG_LVL']), [{ name: 'LOG_LVL', closest: 'LOG_LEVEL' }], 'two letters apart in seven: within a third')
  t.same(unknownSettings(['LOG_LV']), [{ name: 'LOG_LV' }], 'three letters apart in six: beyond a third')
  t.same(unknownSettings(['PORTX', 'XPORT']), [{ name: 'PORTX', closest: 'PORT' }, { name: 'XPORT', closest: 'PORT' }], 'one letter apart, at either end')
  t.same(unknownSettings(['PROT', 'HSOT', 'STROE']), [{ name: 'PROT', closest: 'PORT' }, { name: 'HSOT', closest: 'HOST' }, { name: 'STROE', closest: 'STORE' }],
    'two neighbouring letters swapped: one slip, within a third of a short name')
  t.same(unknownSettings(['PTOR', 'OPTR']), [{ name: 'PTOR' }, { name: 'OPTR' }], 'two slips in four letters: beyond a third')
})

t.test('mistypedSettings: of the whole environment, a name one edit from a setting, or two in six letters or more; never what every process or Kubernetes sets', async (t) => {
  t.same(mistypedSettings(['DATABSE_URL', 'PROT', 'METRCS_HOST', 'DATABASE_UR', 'LOG_LEVL', 'STORES']), [
    { name: 'DATABSE_URL', closest: 'DATABASE_URL' },
    { name: 'PROT', closest: 'PORT' },
    { name: 'METRCS_HOST', closest: 'METRICS_HOST' },
    { name: 'DATABASE_UR', closest: 'DATABASE_URL' },
    { name: 'LOG_LEVL', closest: 'LOG_LEVEL' },
    { name: 'STORES', closest: 'STORE' }
  ])
  t.same(mistypedSettings(['DATABASE_URL', 'PORT', 'NODE_OPTIONS', 'GIT_COMMIT']), [], 'settings and other programs\' variables')
  t.same(mistypedSettings(['HOME', 'PATH', 'PWD', 'USER', 'HOSTNAME', 'TERM', 'SHLVL', 'LANG', 'LC_ALL', 'npm_config_cache', 'npm_lifecycle_event', 'INIT_CWD']), [], 'what every process\'s environment holds (HOME is two edits from HOST)')
  t.same(mistypedSettings(['KUBERNETES_SERVICE_HOST', 'SERVANT_EXAMPLE_API_SERVICE_PORT', 'SERVANT_EXAMPLE_API_PORT', 'SERVANT_EXAMPLE_API_PORT_80_TCP_ADDR', 'POSTGRES_PORT']), [], 'what Kubernetes injects for each Service')
  t.same(mistypedSettings(['HOTS', 'PRT', 'XPRT']), [{ name: 'HOTS', closest: 'HOST' }, { name: 'PRT', closest: 'PORT' }], 'a short name: one edit, not two')
  const warnings: Array<[object, string]> = []
  warnUnknownSettings({ warn: (fields, msg) => { warnings.push([fields, msg]) } }, ['COLOUR'], ['COLOUR', 'DATABSE_URL', 'HOME'])
  t.same(warnings, [
    [{ variable: 'COLOUR', closest: undefined }, '.env sets COLOUR, which is no setting of the service: ignored'],
    [{ variable: 'DATABSE_URL', closest: 'DATABASE_URL' }, 'the environment sets DATABSE_URL, which is no setting of the service: ignored (did you mean DATABASE_URL?)']
  ], 'a name of .env is said once, as .env\'s')
})
