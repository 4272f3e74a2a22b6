import { NotReady } from './error-codes.js'
import { RETRY_AFTER_SECONDS, exposed } from './errors.js'
import type { Store } from './repository.js'

/** What readiness is made of: the app's shutdown (plugins/shutdown.ts), its load (plugins/edge/under-pressure.ts), its store. */
export interface ReadinessParts {
  /** True from the moment the app starts closing. */
  readonly closing: boolean
  isUnderPressure: () => boolean
  readonly store: Pick<Store, 'check'>
}

/**
 * Resolves when this replica can take requests; else rejects with the 503 GET /ready answers: while
 * the app shuts down, while it is overloaded (with Retry-After), while its store does not answer (the
 * store's own error). One function for the route and for the `app_ready` metric, so that the metric
 * says what the probe answers.
 */
export async function checkReady (parts: ReadinessParts): Promise<void> {
  if (parts.closing) throw exposed(new NotReady('the service is shutting down'))
  if (parts.isUnderPressure()) throw exposed(new NotReady('the service is overloaded'), { 'retry-after': String(RETRY_AFTER_SECONDS) })
  await parts.store.check()
}
