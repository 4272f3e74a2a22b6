import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errorResponses } from '../../schemas/common.js'
import { rangeable } from '../../lib/range/rangeable.js'
import { ColorsPageSchema, colorsRequestHeaders, type Color } from '../../schemas/color.js'
import COLORS from './colors.json' with { type: 'json' }

export interface ColorsOptions {
  /** The colours served: the tutorial's 59 by default (bench/colors.bench.js gives a million). */
  colors?: readonly Color[]
}

/** GET /colors: the colours, a page at a time, by the Range header (docs/contract.md, Pagination by Range). */
const colors: FastifyPluginAsyncTypebox<ColorsOptions> = async (fastify, opts) => {
  const collection = rangeable(opts.colors ?? COLORS, {
    name: { type: 'string', value: (color) => color.name },
    hex: { type: 'string', value: (color) => color.hex },
    rgb: { type: 'integer', value: (color) => color.rgb.reduce((sum, component) => sum + component, 0), limit: 5 }
  })

  fastify.get('/', {
    // Always 206, which @fastify/compress never compresses (Content-Range counts unencoded bytes): no compression hooks.
    compress: false,
    schema: {
      summary: 'Colours, a page at a time',
      description: 'Pages through the colours by the `Range` header of servant-pagination: ' +
        '`<field> [<value>][; offset <o>][; limit <l>][; order <asc|desc>]` on `name`, `hex` or `rgb` ' +
        '(the sum of the three components). A value is an inclusive start; ties keep collection order. ' +
        'Defaults: limit 100 (rgb: 5), offset 0, order desc; no `Range` header is the default range on `name`. ' +
        'Always 206, with `Accept-Ranges`, `Total-Count`, and on a non-empty page `Content-Range` and, ' +
        'unless it is the last page, `Next-Range`: the `Range` value of the next page. A malformed `Range` is a 400.',
      produces: ['application/json'],
      headers: colorsRequestHeaders(collection.pattern),
      response: { 206: ColorsPageSchema, ...errorResponses(400, 406) }
    }
  }, (request, reply) => {
    const page = collection.page(request, reply)
    reply.code(206).header('total-count', collection.size)
    return page
  })
}

export default colors
