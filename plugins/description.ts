import { performance } from 'node:perf_hooks'
import fp from 'fastify-plugin'
import type { RouteOptions } from 'fastify'
import { renderDescription, type RouteDescription } from '../lib/description/render.js'
import { describeRoutes } from '../lib/description/routes.js'
import { packageInfo } from '../lib/package-info.js'
import { bearerRequired } from '../lib/secrets.js'
import { ErrorSchema } from '../schemas/common.js'

export interface ApiDescription {
  /** The Markdown page. */
  readonly markdown: string
  /** The endpoints it describes, in page order. */
  readonly routes: readonly RouteDescription[]
  /** How long describing the routes and rendering the page took at start-up, in milliseconds. */
  readonly renderMilliseconds: number
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The API description page (docs/contract.md, "The description page"), rendered once when the server is ready. */
    readonly apiDescription: ApiDescription
  }
}

/**
 * The API description page: every route is collected as it is registered (this plugin loads before
 * routes/), then described and rendered once, when the server is ready. GET /docs serves it, and
 * the not-found handler too when DOCS_CATCH_ALL is on.
 */
export default fp(async function description (fastify) {
  // The route options objects themselves: hooks of route plugins may still complete their schemas.
  const routes: RouteOptions[] = []
  fastify.addHook('onRoute', (route) => { routes.push(route) })

  let described: ApiDescription | undefined
  fastify.decorate('apiDescription', {
    getter () {
      if (described === undefined) throw new Error('the API description is rendered when the server is ready')
      return described
    }
  })

  fastify.addHook('onReady', async function renderPage () {
    const started = performance.now()
    const endpoints = describeRoutes(routes)
    const markdown = renderDescription(endpoints, {
      title: packageInfo.name,
      version: packageInfo.version,
      about: `${packageInfo.description}.`,
      realm: fastify.config.AUTH_REALM,
      bearerRequired: bearerRequired(fastify.config),
      catchAll: fastify.config.DOCS_CATCH_ALL,
      errorExample: ErrorSchema.examples[0],
      basePath: fastify.config.BASE_PATH
    })
    const renderMilliseconds = performance.now() - started
    described = { markdown, routes: endpoints, renderMilliseconds }
    fastify.log.info({ endpoints: endpoints.length, renderMs: Math.round(renderMilliseconds * 100) / 100 }, 'description page rendered')
  })
}, { name: 'description', dependencies: ['config'] })
