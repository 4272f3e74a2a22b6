import { STATUS_CODES } from 'node:http'
import fp from 'fastify-plugin'
import swagger, { type SwaggerTransform, type SwaggerTransformObject } from '@fastify/swagger'
import { ErrorSchema } from '../schemas/common.js'
import { packageInfo } from './description/index.js'
import { errorExample } from './description/render.js'

interface ResponseSchema {
  description?: string
  headers?: unknown
  content?: unknown
  examples?: unknown[]
  format?: string
  contentEncoding?: string
  'x-response-description'?: string
}

/**
 * A response as the document shows it: described by its reason phrase unless the schema says
 * more. An error is labelled JSON whatever the endpoint produces (errors are always JSON), with
 * an example of its own status, as on the description page; bytes of a route that lists no
 * media types (a file) may be of any type.
 */
function documentedResponse (status: string, schema: ResponseSchema, produces: readonly string[] | undefined): ResponseSchema {
  const description = schema.description ?? STATUS_CODES[status] ?? 'Response'
  const error = Number(status) >= 400
  const binary = schema.format === 'binary' || schema.contentEncoding === 'binary'
  if (schema.content !== undefined || (!error && !(binary && produces === undefined))) {
    // @fastify/swagger's key for a response description that is not the schema's.
    return { ...schema, 'x-response-description': description }
  }
  const { headers, examples, ...body } = schema
  const example = error ? errorExample(Number(status), examples?.[0], ErrorSchema.examples[0]) : examples?.[0]
  return {
    description,
    ...(headers === undefined ? {} : { headers }),
    content: {
      [error ? 'application/json' : '*/*']: { schema: body, ...(example === undefined ? {} : { example }) }
    }
  }
}

/** Per route: the security requirement of `config.auth`, and responses as documentedResponse says. */
function documentRoute (bearerRequired: boolean): SwaggerTransform {
  return ({ schema, url, route }) => {
    if (schema === undefined) return { schema, url }
    const auth = route.config?.auth
    const security = auth === 'basic'
      ? [{ basicAuth: [] }]
      : auth === 'bearer' && bearerRequired ? [{ bearerAuth: [] }] : undefined
    const responses = schema.response as Record<string, ResponseSchema> | undefined
    return {
      url,
      schema: {
        ...schema,
        ...(security === undefined ? {} : { security }),
        ...(responses === undefined
          ? {}
          : {
              response: Object.fromEntries(Object.entries(responses).map(([status, response]) =>
                [status, documentedResponse(status, response, schema.produces)]))
            })
      }
    }
  }
}

type OpenApiDocumentObject = Extract<Parameters<SwaggerTransformObject>[0], { openapiObject: unknown }>

/** HEAD is answered for every GET: like the description page, the document lists GET only. */
const withoutHead: SwaggerTransformObject = (document) => {
  const { openapiObject } = document as OpenApiDocumentObject
  for (const item of Object.values(openapiObject.paths ?? {})) delete item?.head
  return openapiObject
}

/**
 * The OpenAPI 3 document of the registered routes, from the same schemas as the description page
 * (@fastify/swagger collects the routes and decorates `fastify.swagger()`). routes/openapi.ts
 * serves it. Routes with `schema.hide` are left out, as from the page.
 */
export default fp(async function openapi (fastify) {
  const { AUTH_REALM, API_TOKENS } = fastify.config
  await fastify.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: packageInfo.name,
        version: packageInfo.version,
        description: `${packageInfo.description}. The same description as Markdown: GET /docs.`
      },
      components: {
        securitySchemes: {
          basicAuth: { type: 'http', scheme: 'basic', description: `HTTP Basic Authentication, realm "${AUTH_REALM}"` },
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'One of the tokens the server is configured with (API_TOKENS)' }
        }
      }
    },
    transform: documentRoute(API_TOKENS !== undefined),
    transformObject: withoutHead
  })
}, { name: 'openapi', dependencies: ['config'] })
