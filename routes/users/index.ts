import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { answerList } from '../../lib/collection-list.js'
import { collectionRoutes } from '../../lib/collection-routes.js'
import { TooManyResponse, UnavailableResponse, errorResponses } from '../../schemas/common.js'
import { UserSchema, UsersPageSchema, UsersQuerySchema, UsersRequestHeadersSchema, UsersWithCountSchema } from '../../schemas/user.js'
import { USER_ENCODINGS, renderUsersForm, renderUsersText } from './listing.js'

/**
 * /users: the user collection (docs/contract.md, Collections) on the user store. Its list is its own: sorting,
 * the User-Count header and four content types (docs/contract.md, The endpoints), and pages by Range.
 */
const users: FastifyPluginAsyncTypebox = async (fastify) => {
  const repository = fastify.store.users
  const user = collectionRoutes({ item: UserSchema, name: 'user', id: 'userid', repository }, fastify)
  fastify.post('/', user.add)
  fastify.get('/:userid', user.view)
  fastify.put('/:userid', user.update)
  fastify.delete('/:userid', user.delete)

  fastify.get('/', {
    schema: {
      summary: 'Every user, in id order or sorted; or a page of them by id',
      description: 'JSON by default; text/plain (one line per user), application/x-www-form-urlencoded (repeated keys) or application/octet-stream (the JSON bytes) by Accept. ' +
        'With a `Range` header (`id [<value>][; offset <o>][; limit <l>][; order <asc|desc>]`, as on /colors), a page of the users by id: ' +
        '206 with `Accept-Ranges`, `Total-Count`, and on a non-empty page `Content-Range` and, unless it is the last page, `Next-Range`. ' +
        'A Range with sortby, or a malformed one, is a 400.',
      produces: ['application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/octet-stream'],
      querystring: UsersQuerySchema,
      headers: UsersRequestHeadersSchema,
      response: { 200: UsersWithCountSchema, 206: UsersPageSchema, ...errorResponses(400, 406), 429: TooManyResponse, 503: UnavailableResponse }
    },
    config: {
      serializers: {
        'text/plain': renderUsersText,
        'application/x-www-form-urlencoded': renderUsersForm,
        'application/octet-stream': 'schema'
      }
    }
  }, (request, reply) => {
    request.log.debug({ userAgent: request.headers['user-agent'] }, 'listing users')
    return answerList(request, reply, { repository, sortBy: request.query.sortby, countHeader: 'user-count', encodings: USER_ENCODINGS })
  })
}

export default users
