import { maxHeaderSize } from 'node:http'
import swagger from '@fastify/swagger'
import fp from 'fastify-plugin'
import { documentRoute, finish, type Json } from '../lib/openapi.js'
import { packageInfo } from '../lib/package-info.js'
import { bearerRequired } from '../lib/secrets.js'

declare module 'fastify' {
  interface FastifySchema {
    /** The schema of a body the route reads itself, optional (Fastify validates no body of a GET). */
    optionalBody?: unknown
  }
}

/**
 * The OpenAPI 3.1 document of the registered routes, from the same schemas as the description page
 * (@fastify/swagger collects the routes and decorates `fastify.swagger()`). routes/openapi.ts
 * serves it. Schemas with an `$id` are components, referred to by `$ref`. Routes with
 * `schema.hide` are left out, as from the page.
 */
export default fp(async function openapi (fastify) {
  const { AUTH_REALM, BASE_PATH } = fastify.config
  const bearer = bearerRequired(fastify.config)
  // The documented paths, for the operation names: known before the document is first built.
  const paths = new Set<string>()
  const components = new Map<string, Json>()
  fastify.addHook('onRoute', (route) => { if (route.schema?.hide !== true) paths.add(route.url.replace(/\/$/, '') || '/') })

  await fastify.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: packageInfo.name,
        version: packageInfo.version,
        // Node's bound, as the process runs (--max-http-header-size): no schema holds it.
        description: `${packageInfo.description}. The same description as Markdown: GET /docs. ` +
          `The request line and headers together are at most ${maxHeaderSize} bytes: 431 above.`,
        license: { name: 'MIT', identifier: 'MIT' }
      },
      servers: [{ url: BASE_PATH === '' ? '/' : BASE_PATH, description: 'This server' }],
      components: {
        securitySchemes: {
          basicAuth: { type: 'http', scheme: 'basic', description: `HTTP Basic Authentication, realm "${AUTH_REALM}"` },
          ...(bearer
            ? { bearerAuth: { type: 'http', scheme: 'bearer', description: 'One of the tokens the server is configured with (API_TOKENS)' } }
            : {})
        }
      }
    },
    transform: documentRoute(bearer, paths, components, { maxParamLength: fastify.initialConfig.routerOptions?.maxParamLength }),
    transformObject: finish(components)
  })
}, { name: 'openapi', dependencies: ['config'] })
