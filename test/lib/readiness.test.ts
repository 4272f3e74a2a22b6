import t from 'tap'
import { checkReady, type ReadinessParts } from '../../lib/readiness.js'
import { StoreUnavailable } from '../../lib/error-codes.js'

/** Readiness parts: ready unless told otherwise; how many times the store was asked. */
function parts ({ closing = false, overloaded = false, store = async () => {} } = {}) {
  const asked = { store: 0 }
  const readiness: ReadinessParts = {
    closing,
    isUnderPressure: () => overloaded,
    store: { check: async () => { asked.store++; await store() } }
  }
  return { readiness, asked }
}

t.test('ready: the store answers, the app neither closes nor is overloaded', async (t) => {
  const { readiness, asked } = parts()
  await t.resolves(checkReady(readiness))
  t.equal(asked.store, 1, 'the store is asked')
})

t.test('not ready: the 503 /ready answers, the first reason of shutdown, overload, store; the store not asked when it needs not be', async (t) => {
  const closing = parts({ closing: true, overloaded: true })
  await t.rejects(checkReady(closing.readiness), { statusCode: 503, code: 'API_ERR_NOT_READY', message: 'Not ready: the service is shutting down', expose: true })
  t.equal(closing.asked.store, 0)
  const overloaded = parts({ overloaded: true })
  await t.rejects(checkReady(overloaded.readiness), { message: 'Not ready: the service is overloaded', headers: { 'retry-after': '5' } })
  t.equal(overloaded.asked.store, 0)
  await t.rejects(checkReady(parts({ store: async () => { throw new StoreUnavailable() } }).readiness), { code: 'API_ERR_STORE_UNAVAILABLE' }, 'the store\'s own error')
})
