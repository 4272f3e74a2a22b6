import { Type, type Static } from '@sinclair/typebox'

/** The persons of the tutorial (docs/contract.md, Sample data), in order. */
export const PERSONS: Array<{ firstName: string, lastName: string }> = [
  { firstName: 'Isaac', lastName: 'Newton' },
  { firstName: 'Albert', lastName: 'Einstein' }
]

/** A person, its fields in the order of the spec's table. */
export const PersonSchema = Type.Object({
  firstName: Type.String(),
  lastName: Type.String()
}, { $id: 'Person', examples: [PERSONS[0]] })

export type Person = Static<typeof PersonSchema>

export const PersonsSchema = Type.Array(PersonSchema, { examples: [PERSONS] })
