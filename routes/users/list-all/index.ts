import type { FastifyPluginAsync } from 'fastify'
import { listAllRoute } from '../../../lib/list-all-route.js'

/** GET /users/list-all and GET /users/list-all/now (chained static segments). */
const listAll: FastifyPluginAsync = async (fastify) => {
  fastify.get('/', listAllRoute('Every user, for an authenticated user', fastify.store.users))
  fastify.get('/now', listAllRoute('Every user, for an authenticated user (chained static segments)', fastify.store.users))
}

export default listAll
