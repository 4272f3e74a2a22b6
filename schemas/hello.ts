import { Type, type Static } from '@sinclair/typebox'

/** The query string of `GET /hello`: an optional name (`?name=` is the empty name, not absence). */
export const HelloQuerySchema = Type.Object({
  name: Type.Optional(Type.String({ description: 'Who to greet; absent: an anonymous coward.', examples: ['Alp'] }))
})

export const HelloMessageSchema = Type.Object({
  msg: Type.String()
}, { examples: [{ msg: 'Hello, Alp' }, { msg: 'Hello, anonymous coward' }] })

export type HelloMessage = Static<typeof HelloMessageSchema>
