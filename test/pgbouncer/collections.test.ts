// The collection suites of routes/collections.postgres.test.ts once more, through Debian's
// pgbouncer in transaction pooling mode (DATABASE_POOLER=transaction): the service keeps nothing on
// a connection between transactions, and its migrations run through the pooler at start. Not part
// of `npm test`: `npm run check:pgbouncer` runs test/pgbouncer/ (and .ci/run, which installs
// pgbouncer, after npm test); without pgbouncer every suite fails, naming it.
import { collectionSuites } from '../helpers/collection-suites.js'

process.env.TEST_STORE = 'pgbouncer'
await collectionSuites()
