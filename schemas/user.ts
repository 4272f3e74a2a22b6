import { Type, type Static } from '@sinclair/typebox'
import { A_NUMBER } from './counters.js'
import { EmailAddress, Name, SafeInteger, StringEnum, withHeaders } from './common.js'
import { idRangeHeader, pageSchema } from './collection.js'

/** The two users of the servant tutorial (docs/contract.md, Sample data), in id order: ids 1 and 2 of the user store. */
export const SAMPLE_USERS = [
  { name: 'Isaac Newton', age: 372, email: 'isaac@newton.co.uk', registration_date: '1683-03-01' },
  { name: 'Albert Einstein', age: 136, email: 'ae@mc2.org', registration_date: '1905-12-01' }
] as const

export const [ISAAC, ALBERT] = SAMPLE_USERS

/** A user, its fields in the order of the spec's table (and of every JSON body). */
export const UserSchema = Type.Object({
  name: Name(),
  age: SafeInteger(),
  email: EmailAddress(),
  registration_date: Type.String({ format: 'date', maxLength: 10, description: 'YYYY-MM-DD' })
}, { $id: 'User', examples: [ISAAC] })

export type User = Static<typeof UserSchema>

export const UsersSchema = Type.Array(UserSchema, { examples: [SAMPLE_USERS] })

/** How GET /users orders its users: by age or by name, ascending; ties keep id order. */
export const SortBySchema = StringEnum(['age', 'name'], {
  description: 'age: by age, ascending; name: by name, ascending (code-unit order). Ties keep id order.',
  examples: ['age']
})

export type SortBy = Static<typeof SortBySchema>

const X_AN_INT = SafeInteger({ description: 'An example integer header; sent by /albert only.', examples: [A_NUMBER] })
const X_A_BOOL = Type.Boolean({ description: 'An example boolean header; sent by /albert only.', examples: [true] })

/** A sample user's response: a User with the two example headers, always sent or never. */
export function sampleUserResponse (example: User, sent: boolean) {
  const headers = sent
    ? Type.Object({ 'X-An-Int': X_AN_INT, 'X-A-Bool': X_A_BOOL })
    : Type.Object({ 'X-An-Int': Type.Optional(X_AN_INT), 'X-A-Bool': Type.Optional(X_A_BOOL) })
  return withHeaders(UserSchema, headers, { examples: [example] })
}

/** `GET /users`: the users, with their number in `User-Count`. */
export const UsersWithCountSchema = Type.Array(UserSchema, {
  examples: [SAMPLE_USERS],
  headers: Type.Object({ 'User-Count': SafeInteger({ description: 'The number of users in the body' }) })
})

/** A page of the users by id (206), from `GET /users` and the list-all routes with a Range header. */
export const UsersPageSchema = pageSchema(UserSchema, 'user', [SAMPLE_USERS])

/** `GET /users`'s query string. */
export const UsersQuerySchema = Type.Object({ sortby: Type.Optional(SortBySchema) })

/** The request headers `GET /users` reads. */
export const UsersRequestHeadersSchema = Type.Object({
  'User-Agent': Type.Optional(Type.String({ description: 'Read, with no effect on the body' })),
  Range: Type.Optional(idRangeHeader('user', ' A Range with sortby is a 400 too: a page is in id order.'))
})

/** The request headers of the list-all routes. */
export const ListAllRequestHeadersSchema = Type.Object({ Range: Type.Optional(idRangeHeader('user')) })

/** The largest `count` of `GET /userStream`. */
export const USER_STREAM_MAX_COUNT = 10_000_000

/** `GET /userStream`'s query string. */
export const UserStreamQuerySchema = Type.Object({
  count: Type.Optional(Type.Integer({
    minimum: 0,
    maximum: USER_STREAM_MAX_COUNT,
    description: `How many users to stream (0 to ${USER_STREAM_MAX_COUNT}), cycling Isaac, Albert, Albert. Default: 3.`,
    examples: [5]
  }))
})
