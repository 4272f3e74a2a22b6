// The collection suites of collections.postgres.test.ts once more, through Debian's pgbouncer in
// transaction pooling mode (DATABASE_POOLER=transaction): the service keeps nothing on a
// connection between transactions, and its migrations run through the pooler at start. Skipped
// where pgbouncer is not installed (CI installs it: .ci/run).
import t from 'tap'
import { collectionSuites } from '../helpers/collection-suites.js'
import { PGBOUNCER } from '../helpers/pgbouncer.js'

if (PGBOUNCER === undefined) {
  t.test('the collection suites through pgbouncer', { skip: 'pgbouncer is not installed (apt-get install pgbouncer)' }, async () => {})
} else {
  process.env.TEST_STORE = 'pgbouncer'
  await collectionSuites()
}
