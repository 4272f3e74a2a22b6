import type { FastifyPluginAsync } from 'fastify'
import { listAllRoute } from '../../lib/list-all-route.js'

/** GET /list-all/users: the same list as /users/list-all, on another path. */
const listAll: FastifyPluginAsync = async (fastify) => {
  fastify.get('/users', listAllRoute('Every user, for an authenticated user', fastify.store.users))
}

export default listAll
