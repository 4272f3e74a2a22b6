import type { FastifyPluginAsync } from 'fastify'
import { listAllRoute } from '../../../lib/list-all-route.js'

/** GET /users/list-all and GET /users/list-all/now (chained static segments). */
const listAll: FastifyPluginAsync = async (fastify) => {
  listAllRoute(fastify, '/', 'Every user, for an authenticated user')
  listAllRoute(fastify, '/now', 'Every user, for an authenticated user (chained static segments)')
}

export default listAll
