import fs from 'node:fs'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import fp from 'fastify-plugin'
import type { RouteOptions } from 'fastify'
import { projectRoot } from '../config.js'
import { ErrorSchema } from '../../schemas/common.js'
import { byPathThenMethod, renderDescription, type RouteDescription, type Schema } from './render.js'

/** The service's name, version and one-line description, from package.json. */
export const packageInfo = JSON.parse(fs.readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as {
  name: string
  version: string
  description: string
}

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
    /** The API description page (DECISIONS §6), rendered once when the server is ready. */
    readonly apiDescription: ApiDescription
  }
}

/** Whether a route is described: all but those hidden by `schema.hide`, the @fastify/swagger convention. */
export function isDescribed (route: Pick<RouteOptions, 'schema'>): boolean {
  return route.schema?.hide !== true
}

/** The path as the page writes it: captures `:name` without their regular expression, no trailing slash. */
export function endpointPath (url: string): string {
  const path = url.replace(/(:[A-Za-z0-9_]+)\((?:[^()]|\([^()]*\))*\)/g, '$1').replace(/::/g, ':')
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path
}

function describeRoute (route: RouteOptions, method: string): RouteDescription {
  const schema = route.schema ?? {}
  const serializers = route.config?.serializers
  return {
    method,
    path: endpointPath(route.url),
    summary: schema.summary,
    description: schema.description,
    captures: schema.params as Schema | undefined,
    query: schema.querystring as Schema | undefined,
    headers: schema.headers as Schema | undefined,
    body: schema.body as Schema | undefined,
    optionalBody: schema.optionalBody as Schema | undefined,
    consumes: schema.consumes,
    produces: schema.produces,
    responses: schema.response as Record<string, Schema> | undefined,
    auth: route.config?.auth,
    serializers: serializers === undefined
      ? undefined
      : Object.fromEntries(Object.entries(serializers).map(([type, serializer]) =>
        // 'schema': the response schema's JSON under that type; the example is valid JSON of it.
        [type, serializer === 'schema' ? JSON.stringify : serializer]))
  }
}

/**
 * The endpoints of registered routes, by path and method: one per method and path, HEAD left out
 * (it is answered for every GET) and so are routes hidden by `schema.hide`.
 */
export function describeRoutes (routes: readonly RouteOptions[]): RouteDescription[] {
  const endpoints = new Map<string, RouteDescription>()
  for (const route of routes.filter(isDescribed)) {
    for (const method of [route.method].flat().map((name) => name.toUpperCase())) {
      const key = `${method} ${endpointPath(route.url)}`
      if (method !== 'HEAD' && !endpoints.has(key)) endpoints.set(key, describeRoute(route, method))
    }
  }
  return [...endpoints.values()].sort(byPathThenMethod)
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
      bearerRequired: fastify.config.API_TOKENS !== undefined,
      catchAll: fastify.config.DOCS_CATCH_ALL,
      errorExample: ErrorSchema.examples[0],
      basePath: fastify.config.BASE_PATH
    })
    const renderMilliseconds = performance.now() - started
    described = { markdown, routes: endpoints, renderMilliseconds }
    fastify.log.info({ endpoints: endpoints.length, renderMs: Math.round(renderMilliseconds * 100) / 100 }, 'description page rendered')
  })
}, { name: 'description', dependencies: ['config'] })
