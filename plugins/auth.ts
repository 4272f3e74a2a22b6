import fp from 'fastify-plugin'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Credentials the route requires, declared once: `basic` (HTTP Basic Authentication against
     * BASIC_AUTH_USERS, realm AUTH_REALM) or `bearer` (a token of API_TOKENS, when it is set).
     * The auth plugin enforces it; the description page and the OpenAPI document show it.
     */
    auth?: 'basic' | 'bearer'
  }
}

export default fp(async function auth () {}, { name: 'auth' })
