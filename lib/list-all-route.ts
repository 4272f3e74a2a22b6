import type { FastifyInstance } from 'fastify'
import { UnavailableResponse, errorResponses } from '../schemas/common.js'
import { UsersSchema } from '../schemas/user.js'

/**
 * Registers a route of /users/list-all, /users/list-all/now or /list-all/users: the user store's
 * users as JSON (like GET /users without parameters), behind Basic Authentication.
 */
export function listAllRoute (fastify: FastifyInstance, url: string, summary: string): void {
  fastify.get(url, {
    schema: {
      summary,
      description: 'Like GET /users without parameters, behind HTTP Basic Authentication (realm AUTH_REALM, users BASIC_AUTH_USERS).',
      produces: ['application/json'],
      response: { 200: UsersSchema, ...errorResponses(406), 503: UnavailableResponse }
    },
    config: { auth: 'basic' }
  }, async function listAll (request) {
    request.log.debug({ user: request.authUser?.name }, 'listing users for an authenticated user')
    return this.store.users.list()
  })
}
