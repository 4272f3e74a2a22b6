import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { UserSchema } from '../../schemas/user.js'
import { collectionRoutes } from '../../lib/collection-routes.js'

/** GET and DELETE /user/:userid: the user collection's view and delete, on the same store as /users. */
const user: FastifyPluginAsyncTypebox = async (fastify) => {
  const user = collectionRoutes({ item: UserSchema, name: 'user', id: 'userid', repository: fastify.store.users }, fastify)
  fastify.get('/:userid', user.view)
  fastify.delete('/:userid', user.delete)
}

export default user
