/**
 * The users, user, products and list-all suites (the routes' and lib/list-all-route.ts's), run
 * again by a file that first sets TEST_STORE (see build() in ./index.ts): the same promises, on
 * another store. One process for them all: one server to start.
 */
export async function collectionSuites (): Promise<void> {
  await import('../routes/users.test.js')
  await import('../routes/user.test.js')
  await import('../routes/products.test.js')
  await import('../routes/list-all.test.js')
  await import('../lib/list-all-route.test.js')
}
