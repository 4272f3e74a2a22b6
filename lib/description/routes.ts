import type { RouteOptions } from 'fastify'
import { byPathThenMethod, type RouteDescription, type Schema } from './render.js'

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
    bodyLimit: route.bodyLimit,
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
