import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { collectionRoutes } from '../../lib/collection-routes.js'
import { UnavailableResponse, errorResponses } from '../../schemas/common.js'
import { UserSchema, UsersQuerySchema, UsersRequestHeadersSchema, UsersWithCountSchema } from '../../schemas/user.js'
import { renderUsersForm, renderUsersText, sortUsers } from './listing.js'

/**
 * /users: the user collection (docs/contract.md, Collections) on the user store. Its list is its own: sorting,
 * the User-Count header and four content types (docs/contract.md, The endpoints).
 */
const users: FastifyPluginAsyncTypebox = async (fastify) => {
  const repository = fastify.store.users
  collectionRoutes(fastify, {
    item: UserSchema,
    name: 'user',
    id: 'userid',
    repository,
    routes: ['add', 'view', 'update', 'delete']
  })

  fastify.get('/', {
    schema: {
      summary: 'Every user, in id order or sorted',
      description: 'JSON by default; text/plain (one line per user), application/x-www-form-urlencoded (repeated keys) or application/octet-stream (the JSON bytes) by Accept.',
      produces: ['application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/octet-stream'],
      querystring: UsersQuerySchema,
      headers: UsersRequestHeadersSchema,
      response: { 200: UsersWithCountSchema, ...errorResponses(400, 406), 503: UnavailableResponse }
    },
    config: {
      serializers: {
        'text/plain': renderUsersText,
        'application/x-www-form-urlencoded': renderUsersForm,
        'application/octet-stream': 'schema'
      }
    }
  }, async (request, reply) => {
    request.log.debug({ userAgent: request.headers['user-agent'] }, 'listing users')
    const list = sortUsers(await repository.list(), request.query.sortby)
    reply.header('user-count', list.length)
    return list
  })
}

export default users
