// Compiled by test/system/client-package.test.ts in a project that installed the packed client, strict
// and without Node's types: every line type-checks but those marked @ts-expect-error, which must not.
import { createApiClient, unwrap, type ApiClient, type Position, type User } from 'servant-example-api-client'

/** unwrap() answers the data of the success itself, not `Data | undefined`. */
export async function successData (api: ApiClient): Promise<unknown[]> {
  const position = await unwrap(api.GET('/position/{x}/{y}', { params: { path: { x: 10, y: 10 } } }))
  const message = await unwrap(api.GET('/hello', { params: { query: { name: 'servant' } } }))
  const user = await unwrap(api.GET('/users/{userid}', { params: { path: { userid: 1 } } }))
  const same: Position = position
  const docs: string = await unwrap(api.GET('/docs', { parseAs: 'text' }))
  const products = await unwrap(api.GET('/products'))
  // @ts-expect-error: a Position is not a User
  const wrong: User = position
  // @ts-expect-error: a Position has no `msg`
  console.log(position.msg)
  return [position.xCoord + position.yCoord, message.msg.length, user.name, same, docs.length, products.map((product) => product.name), wrong]
}

/** A 204 has no data: unwrap() answers undefined, as the answer does. */
export async function noContent (api: ApiClient): Promise<undefined> {
  return await unwrap(api.DELETE('/users/{userid}', { params: { path: { userid: 1 } } }))
}

/** The client is made the way docs/client.md shows, in a browser as in Node. */
export function client (): ApiClient {
  return createApiClient({ baseUrl: 'http://localhost:3000', credentials: { basic: { username: 'jürgen', password: 'pä€' } } })
}
