import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { TooManyResponse, errorResponses } from '../../schemas/common.js'
import { ALBERT, ISAAC, UserSchema, UserStreamQuerySchema, type User } from '../../schemas/user.js'

/** The users of the stream, in the order servant's tutorial streams them; `count` cycles through it. */
export const USER_CYCLE: readonly User[] = [ISAAC, ALBERT, ALBERT]

/** `count` users cycling through USER_CYCLE, produced one at a time as they are pulled. */
export function * userSequence (count: number): Generator<User, void, undefined> {
  for (let i = 0; i < count; i++) yield USER_CYCLE[i % USER_CYCLE.length] as User
}

/** GET /userStream?count=: users as NDJSON, produced lazily, with backpressure. */
const userStream: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/', {
    schema: {
      summary: 'A stream of users, one JSON object per line',
      description: 'NDJSON: each User is one compact JSON object followed by `\\n`, written as it is produced. ' +
        'By default Isaac, Albert, Albert; `?count=N` streams N users cycling through that sequence. ' +
        '`Accept: application/json` gets the same bytes labelled `application/json`. ' +
        'Production stops when the client goes away; a slow client slows production down.',
      produces: ['application/x-ndjson', 'application/json'],
      querystring: UserStreamQuerySchema,
      response: { 200: UserSchema, ...errorResponses(400, 406), 429: TooManyResponse }
    }
  }, async (request, reply) => reply.ndjson(userSequence(request.query.count ?? USER_CYCLE.length), UserSchema))
}

export default userStream
