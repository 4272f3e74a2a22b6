import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { SafeInteger, UnavailableResponse, errorResponses } from '../../schemas/common.js'
import { SAMPLE_USERS, SortBySchema, UserSchema } from '../../schemas/user.js'
import { collectionRoutes } from '../../plugins/collections/routes.js'
import { renderUsersForm, renderUsersText, sortUsers } from './listing.js'

const UsersWithCount = Type.Array(UserSchema, {
  examples: [SAMPLE_USERS],
  headers: Type.Object({ 'User-Count': SafeInteger({ description: 'The number of users in the body' }) })
})

/**
 * /users: the user collection (DECISIONS §5) on the user store. Its list is its own: sorting,
 * the User-Count header and four content types (DECISIONS §3).
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
      querystring: Type.Object({ sortby: Type.Optional(SortBySchema) }),
      headers: Type.Object({ 'User-Agent': Type.Optional(Type.String({ description: 'Read, with no effect on the body' })) }),
      response: { 200: UsersWithCount, ...errorResponses(400, 406), 503: UnavailableResponse }
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
