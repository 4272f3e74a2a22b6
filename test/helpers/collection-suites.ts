/**
 * The users, user, products and list-all suites (the routes' and lib/list-all-route.ts's), run
 * again by a process that first sets TEST_STORE (see build() in ./index.ts): the same promises, on
 * another store (test/groups/01-postgres.ts, test/system/pgbouncer/collections.test.ts). Relative to test/.
 */
export const COLLECTION_SUITES = [
  'routes/users.test.ts',
  'routes/user.test.ts',
  'routes/products.test.ts',
  'routes/list-all.test.ts',
  'lib/list-all-route.test.ts'
] as const
