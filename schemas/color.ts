import { Type, type Static } from '@sinclair/typebox'
import { SafeInteger, documentOnly } from './common.js'

const AQUA = { name: 'Aqua', rgb: [0, 255, 255], hex: '#00ffff' }
const YELLOW = { name: 'Yellow', rgb: [255, 255, 0], hex: '#ffff00' }
const WHITE = { name: 'White', rgb: [255, 255, 255], hex: '#ffffff' }

/** A colour, its fields in the order of the spec's table (and of every JSON body). */
export const ColorSchema = Type.Object({
  name: Type.String(),
  rgb: Type.Array(Type.Integer({ minimum: 0, maximum: 255 }), {
    minItems: 3,
    maxItems: 3,
    description: 'red, green, blue (0–255)'
  }),
  hex: Type.String({ pattern: '^#[0-9a-fA-F]{6}$', description: '# and six hexadecimal digits' })
}, { $id: 'Color', examples: [AQUA] })

export type Color = Static<typeof ColorSchema>

/**
 * The Range request header of GET /colors, its pattern the one of the route's rangeable fields
 * (lib/range/pattern.ts). The pattern is the document's only: a Range it does not match is
 * still refused by the grammar, with the grammar's code and message.
 */
export function colorsRequestHeaders (rangePattern: string) {
  return Type.Object({
    Range: Type.Optional(documentOnly(Type.String({
      description: '`<field> [<value>][; offset <o>][; limit <l>][; order <asc|desc>]` on the field name, hex or rgb ' +
        '(the value percent-encoded); defaults: limit 100 (rgb: 5), offset 0, order desc. Absent: the default range on name. ' +
        'A malformed value is a 400; the pattern of the OpenAPI document matches well-formed values only.',
      examples: ['name', 'name; limit 2', 'name Green; order asc; offset 1', 'hex %23808080; limit 2', 'rgb 255; order asc']
    }), { pattern: rangePattern }))
  })
}

/** A page of colours (status 206) and the pagination headers that come with it (optional: not always sent). */
export const ColorsPageSchema = Type.Array(ColorSchema, {
  examples: [[YELLOW, WHITE]],
  headers: Type.Object({
    'Accept-Ranges': Type.String({ description: 'The fields a range may be defined on.', examples: ['name,hex,rgb'] }),
    'Content-Range': Type.Optional(Type.String({
      description: '`<field> <first>..<last>`: the field values of the first and last colour returned (percent-encoded). Absent on an empty page.',
      examples: ['name Yellow..White']
    })),
    'Next-Range': Type.Optional(Type.String({
      description: 'The Range header value of the next page. Absent on an empty page and on the last one (shorter than the limit).',
      examples: ['name White;limit 2;offset 1;order desc']
    })),
    'Total-Count': SafeInteger({ minimum: 0, description: 'How many colours the collection has.', examples: [59] })
  })
})
