// Compiled by test/system/client-package.test.ts in a project that installed the packed client, strict
// and without Node's types: every line type-checks but those marked @ts-expect-error, which must not.
import { unwrap, type ApiClient, type ClientInfo, type Email, type User } from 'servant-example-api-client'

const ALP: ClientInfo = { clientName: 'Alp', clientEmail: 'alp@foo.com', clientAge: 26, clientInterestedIn: ['haskell'] }

/** GET /users: the data typed by the media type asked. */
export async function users (api: ApiClient): Promise<unknown[]> {
  const json: User[] = await unwrap(api.users())
  const sorted: User[] = await unwrap(api.users({ sortby: 'age', accept: 'application/json' }))
  const text = await unwrap(api.users({ accept: 'text/plain' }))
  const form = await unwrap(api.users({ accept: 'application/x-www-form-urlencoded' }))
  const bytes: ArrayBuffer = await unwrap(api.users({ accept: 'application/octet-stream' }))
  // @ts-expect-error: text/plain is a string, not a list of users
  console.log(text.map((user) => user.name))
  // @ts-expect-error: JSON is a list of users, not a string
  const line: string = await unwrap(api.users())
  // @ts-expect-error: not a media type of GET /users
  await api.users({ accept: 'text/html' })
  // @ts-expect-error: not an order of GET /users
  await api.users({ sortby: 'email' })
  return [json, sorted, text.split('\n'), form.name?.[0], form.age, bytes.byteLength, line]
}

/** POST /marketing: a ClientInfo, as JSON or as a form; an Email back. */
export async function marketing (api: ApiClient): Promise<Email[]> {
  const json: Email = await unwrap(api.marketing(ALP))
  const form: Email = await unwrap(api.marketing(ALP, { as: 'form' }))
  // @ts-expect-error: clientAge is a number
  await api.marketing({ ...ALP, clientAge: '26' }, { as: 'form' })
  // @ts-expect-error: JSON or a form, nothing else
  await api.marketing(ALP, { as: 'xml' })
  return [json, form]
}
