import createError from '@fastify/error'
import t from 'tap'
import { BodyNotAccepted, CollectionFull, FailureTableFull, NotReady, RateLimited, StoreUnavailable, TooManyFailures, TooManyNetworkFailures, TooManyStreams, TooManyUserFailures } from '../../../lib/error-codes.js'
import { OVERLOAD_CODE, REFUSAL_CAUSES, Refusals, refusalCause } from '../../../lib/metrics/refusals.js'

t.test('the cause of each refusal, from its error; none for the other errors', async (t) => {
  const Overloaded = createError(OVERLOAD_CODE, 'overloaded', 503)
  const BodyTooLarge = createError('FST_ERR_CTP_BODY_TOO_LARGE', 'Request body is too large', 413)
  t.equal(refusalCause(new Overloaded()), 'overload')
  t.equal(refusalCause(new RateLimited(1, 60, 5)), 'rate_limit')
  t.equal(refusalCause(new TooManyFailures(5)), 'failed_logins')
  t.equal(refusalCause(new TooManyUserFailures(5)), 'failed_logins', 'the limit per user, too')
  t.equal(refusalCause(new BodyTooLarge()), 'body_too_large', 'Fastify\'s 413')
  t.equal(refusalCause(new BodyNotAccepted('GET', '/hello')), 'body_too_large', 'a body on a route that takes none')
  t.equal(refusalCause(new CollectionFull(40000)), 'collection_full', 'a POST to a collection at its ceiling')
  t.equal(refusalCause(new TooManyStreams(16, 5)), 'stream_limit', 'a client with as many streams open as it may')
  t.equal(refusalCause(new TooManyNetworkFailures(5)), 'failed_logins', 'the ceiling of a network, too')
  t.equal(refusalCause(new FailureTableFull(5)), 'auth_table_full', 'the failed-login table without room for a lock')
  for (const error of [new NotReady('overloaded'), new StoreUnavailable(), new Error('bug'), Object.assign(new Error('Not Found'), { statusCode: 404 })]) {
    t.equal(refusalCause(error), undefined, `not a refusal of a cause: ${error.message}`)
  }
})

t.test('the counts: every cause from the start, each refusal under its cause', async (t) => {
  const refusals = new Refusals()
  const zero = REFUSAL_CAUSES.map((cause) => `http_requests_refused_total{cause="${cause}"} 0`)
  t.same(refusals.render().split('\n').filter((line) => !line.startsWith('#') && line !== ''), zero)
  refusals.count(new RateLimited(1, 60, 5))
  refusals.count(new RateLimited(1, 60, 5))
  refusals.count(new StoreUnavailable())
  t.match(refusals.render(), /^# TYPE http_requests_refused_total counter$/m)
  t.match(refusals.render(), /^http_requests_refused_total\{cause="rate_limit"\} 2$/m)
  t.match(refusals.render(), /^http_requests_refused_total\{cause="overload"\} 0$/m)
})
