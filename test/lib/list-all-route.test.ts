import t from 'tap'
import { ALBERT, ISAAC } from '../../schemas/user.js'
import { assertError, build, json } from '../helpers/index.js'

const PROTECTED = ['/users/list-all', '/list-all/users', '/users/list-all/now']
const SERVANT = { authorization: `Basic ${Buffer.from('servant:server').toString('base64')}` }
const ADA = { name: 'Ada Lovelace', age: 36, email: 'ada@engine.org', registration_date: '1843-07-01' }

t.test('the list-all routes page the users by id with a Range header, as GET /users does', async (t) => {
  const app = await build(t)
  t.equal((await app.inject({ method: 'POST', url: '/users', payload: ADA })).statusCode, 204)
  for (const url of PROTECTED) {
    const res = await app.inject({ url, headers: { ...SERVANT, range: 'id 2; limit 1' } })
    t.equal(res.statusCode, 206, url)
    t.same(json(res), [ALBERT])
    t.equal(res.headers['accept-ranges'], 'id')
    t.equal(res.headers['content-range'], 'id 2..2')
    t.equal(res.headers['next-range'], 'id 2;limit 1;offset 1;order asc')
    t.equal(res.headers['total-count'], '3')
    t.notOk(res.headers['user-count'], 'User-Count is GET /users\' own')
    t.same(json(await app.inject({ url, headers: { ...SERVANT, range: 'id; order desc' } })), [ADA, ALBERT, ISAAC], `${url}: descending`)
    assertError(t, await app.inject({ url, headers: { ...SERVANT, range: 'id; limit x' } }), 400, /^Invalid Range Options/)
  }
})

t.test('authentication first: without credentials a Range, even a malformed one, gets the 401', async (t) => {
  const app = await build(t)
  for (const url of PROTECTED) {
    for (const range of ['id', 'nonsense']) {
      const res = await app.inject({ url, headers: { range } })
      assertError(t, res, 401)
      t.equal(res.headers['www-authenticate'], 'Basic realm="my-realm"')
      t.notOk(res.headers['accept-ranges'], `${url} ${range}: nothing about ranges before the credentials`)
    }
  }
})
