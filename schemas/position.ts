import { Type, type Static } from '@sinclair/typebox'
import { SafeInteger } from './common.js'

/** The captures of `GET /position/:x/:y`: two integers on the wire (`-3`, `+4`). */
export const PositionParamsSchema = Type.Object({
  x: SafeInteger({ description: 'The x coordinate: an optional sign and decimal digits.', examples: [1] }),
  y: SafeInteger({ description: 'The y coordinate: an optional sign and decimal digits.', examples: [2] })
})

/** A position, its fields in the order of the spec's table. */
export const PositionSchema = Type.Object({
  xCoord: SafeInteger(),
  yCoord: SafeInteger()
}, { $id: 'Position', examples: [{ xCoord: 1, yCoord: 2 }] })

export type Position = Static<typeof PositionSchema>
