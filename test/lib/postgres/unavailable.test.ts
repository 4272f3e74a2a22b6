import t from 'tap'
import { isUnavailable, storeUnavailable } from '../../../lib/postgres/unavailable.js'

t.test('isUnavailable: what the database cannot serve, as opposed to our faults', async (t) => {
  const cases: Array<[unknown, boolean]> = [
    [Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }), true],
    [new Error('Connection terminated unexpectedly'), true],
    [new Error('timeout exceeded when trying to connect'), true],
    [Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }), true],
    [Object.assign(new Error('the database system is starting up'), { code: '57P03' }), true],
    [Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }), true],
    [Object.assign(new Error('sorry, too many clients already'), { code: '53300' }), true],
    [Object.assign(new Error('connection failure'), { code: '08006' }), true],
    [Object.assign(new Error('could not write to file'), { code: '58030' }), true],
    [Object.assign(new Error('relation "users" does not exist'), { code: '42P01' }), false],
    [Object.assign(new Error('syntax error'), { code: '42601' }), false],
    [Object.assign(new Error('invalid input syntax for type json'), { code: '22P02' }), false]
  ]
  for (const [err, expected] of cases) t.equal(isUnavailable(err), expected, (err as Error).message)
})

t.test('storeUnavailable', async (t) => {
  const cause = new Error('down')
  t.match(storeUnavailable(cause), { statusCode: 503, message: 'The database is unavailable: retry later', cause })
})
