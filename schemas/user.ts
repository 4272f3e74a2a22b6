import { Type, type Static } from '@sinclair/typebox'
import { SafeInteger, StringEnum } from './common.js'

/** The two users of the servant tutorial (DECISIONS §2), in id order: ids 1 and 2 of the user store. */
export const SAMPLE_USERS = [
  { name: 'Isaac Newton', age: 372, email: 'isaac@newton.co.uk', registration_date: '1683-03-01' },
  { name: 'Albert Einstein', age: 136, email: 'ae@mc2.org', registration_date: '1905-12-01' }
] as const

export const [ISAAC, ALBERT] = SAMPLE_USERS

/** A user, its fields in the order of the spec's table (and of every JSON body). */
export const UserSchema = Type.Object({
  name: Type.String(),
  age: SafeInteger(),
  email: Type.String(),
  registration_date: Type.String({ format: 'date', description: 'YYYY-MM-DD' })
}, { $id: 'User', examples: [ISAAC] })

export type User = Static<typeof UserSchema>

export const UsersSchema = Type.Array(UserSchema, { examples: [SAMPLE_USERS] })

/** How GET /users orders its users: by age or by name, ascending; ties keep id order. */
export const SortBySchema = StringEnum(['age', 'name'], {
  description: 'age: by age, ascending; name: by name, ascending (code-unit order). Ties keep id order.',
  examples: ['age']
})

export type SortBy = Static<typeof SortBySchema>
