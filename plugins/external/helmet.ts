import helmet, { type FastifyHelmetOptions } from '@fastify/helmet'

/**
 * Security headers on every response (@fastify/helmet, helmet's defaults), with a
 * Content-Security-Policy that Swagger UI at /documentation works under: its scripts, styles
 * and the calls of "Try it out" all come from this origin, its inline styles are allowed by
 * helmet's `style-src`, its logo is a `data:` image. `upgrade-insecure-requests` is left out:
 * whether the API is reached over HTTPS is the reverse proxy's business, and on a plain-HTTP
 * address the directive would send the page's own requests to an HTTPS port nobody serves.
 * `npm run test:browser` checks the page in Chromium under this policy.
 */
export const autoConfig: FastifyHelmetOptions = {
  contentSecurityPolicy: {
    directives: {
      upgradeInsecureRequests: null
    }
  }
}

export default helmet
