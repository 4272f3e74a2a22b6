import { Type, type Static } from '@sinclair/typebox'
import { titledExamples } from './common.js'

/** The query string of `GET /hello`: an optional name (`?name=` is the empty name, not absence). */
export const HelloQuerySchema = Type.Object({
  name: Type.Optional(Type.String({ description: 'Who to greet; absent: an anonymous coward.', examples: ['Alp'] }))
})

export const HelloMessageSchema = Type.Object({
  msg: Type.String()
}, {
  $id: 'HelloMessage',
  ...titledExamples([
    ['When a value is provided for \'name\'', { msg: 'Hello, Alp' }],
    ['When \'name\' is not specified', { msg: 'Hello, anonymous coward' }]
  ])
})

export type HelloMessage = Static<typeof HelloMessageSchema>
