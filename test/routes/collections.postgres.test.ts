// The users, user, products and list-all suites (the routes' and lib/list-all-route.ts's) again, on
// the PostgreSQL store: every app they build gets a fresh database of this process's PostgreSQL
// server (see build() in ../helper.ts). One process for the five: one server to start.
process.env.TEST_STORE = 'postgres'
await import('./users.test.js')
await import('./user.test.js')
await import('./products.test.js')
await import('./list-all.test.js')
await import('../lib/list-all-route.test.js')
