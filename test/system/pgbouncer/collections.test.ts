// The collection suites once more (as test/groups/01-postgres.ts runs them on PostgreSQL), through
// Debian's pgbouncer in transaction pooling mode (DATABASE_POOLER=transaction): the service keeps
// nothing on a connection between transactions, and its migrations run through the pooler at
// start. Without pgbouncer every suite fails, naming it.
import { COLLECTION_SUITES } from '../../helpers/collection-suites.js'
import { runSuites } from '../../helpers/groups.js'

process.env.TEST_STORE = 'pgbouncer'
await runSuites(COLLECTION_SUITES)
