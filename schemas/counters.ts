import { Type } from '@sinclair/typebox'
import { SafeInteger } from './common.js'

/** The number the tutorial's `/a` answers with, and `/albert`'s `X-An-Int`. */
export const A_NUMBER = 1797

export const ASchema = SafeInteger({ examples: [A_NUMBER] })

/** `GET /b`: the string `"hi"` when there is no body, `true` for a JSON number body. */
export const BSchema = Type.Union([Type.Literal('hi'), Type.Literal(true)], {
  description: '"hi" without a request body; true with a JSON number body.',
  examples: ['hi', true]
})

/** `GET /b`'s body, which it reads itself and may be absent. */
export const BBodySchema = Type.Number({ description: 'Optional: any JSON number.', examples: [42] })
