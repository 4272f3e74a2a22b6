// The user suite again, on the PostgreSQL store: a fresh database for every app it builds.
process.env.TEST_STORE = 'postgres'
await import('./user.test.js')
