import t from 'tap'
import { redactedUrl } from '../../../lib/postgres/connect.js'

t.test('redactedUrl', async (t) => {
  t.equal(redactedUrl('postgres://app:s3cret@db:5432/app'), 'postgres://app:***@db:5432/app', 'the password masked')
  t.equal(redactedUrl('postgresql://db/app'), 'postgresql://db/app', 'nothing to mask')
  t.equal(redactedUrl('postgres://db/app?user=postgres&password=SECRET'), 'postgres://db/app?user=postgres&password=***', 'a password in the query string')
  t.equal(redactedUrl('postgres://u:one@db/app?sslmode=require&sslpassword=two&PASSWORD=three'),
    'postgres://u:***@db/app?sslmode=require&sslpassword=***&PASSWORD=***', 'every form of it')
  t.equal(redactedUrl('postgres://[db'), 'the database of DATABASE_URL', 'a URL that does not parse is not echoed')
})
