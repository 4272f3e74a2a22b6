// The collection suites again, on the PostgreSQL store: every app they build gets a fresh database
// of this process's PostgreSQL server.
import { collectionSuites } from '../helpers/collection-suites.js'

process.env.TEST_STORE = 'postgres'
await collectionSuites()
