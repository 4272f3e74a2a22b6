// The collection suites of collections.postgres.test.ts once more, through Debian's pgbouncer in
// transaction pooling mode (DATABASE_POOLER=transaction): the service keeps nothing on a
// connection between transactions, and its migrations run through the pooler at start. Skipped
// where pgbouncer is not installed, except in CI, which installs it (.ci/run): there its absence
// fails every suite, naming it.
import t from 'tap'
import { collectionSuites } from '../helpers/collection-suites.js'
import { SKIP_WITHOUT_PGBOUNCER } from '../helpers/pgbouncer.js'

if (SKIP_WITHOUT_PGBOUNCER !== false) {
  t.test('the collection suites through pgbouncer', { skip: SKIP_WITHOUT_PGBOUNCER }, async () => {})
} else {
  process.env.TEST_STORE = 'pgbouncer'
  await collectionSuites()
}
