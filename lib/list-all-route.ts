import type { RouteShorthandOptionsWithHandler } from 'fastify'
import { TooManyResponse, UnavailableResponse, errorResponses } from '../schemas/common.js'
import { ListAllRequestHeadersSchema, UsersPageSchema, UsersSchema, type User } from '../schemas/user.js'
import { answerList } from './collection-list.js'
import type { Repository } from './repository.js'

/**
 * The options, handler included, of a GET route of /users/list-all, /users/list-all/now or
 * /list-all/users: the user store's users as JSON (like GET /users without parameters), or a page
 * of them by a Range header, behind Basic Authentication. The route file registers it.
 */
export function listAllRoute (summary: string, repository: Repository<User>) {
  return {
    schema: {
      summary,
      description: 'Like GET /users without parameters, behind HTTP Basic Authentication (realm AUTH_REALM, users BASIC_AUTH_USERS); ' +
        'a `Range` header asks for a page by id, as on GET /users.',
      produces: ['application/json'],
      headers: ListAllRequestHeadersSchema,
      response: { 200: UsersSchema, 206: UsersPageSchema, ...errorResponses(400, 406), 429: TooManyResponse, 503: UnavailableResponse }
    },
    config: { auth: 'basic' },
    handler: function listAll (request, reply) {
      request.log.debug({ user: request.authUser?.name }, 'listing users for an authenticated user')
      return answerList(request, reply, { repository })
    }
  } satisfies RouteShorthandOptionsWithHandler
}
