// deploy/nginx.conf run by Debian's nginx in front of two replicas of the built service on one
// PostgreSQL (deploy/check-nginx.mjs, also `npm run check:nginx`): each of its checks an assertion.
import t from 'tap'
import { runCheckScript } from '../helpers/check-script.js'

t.test('deploy/nginx.conf in front of two replicas', async (t) => {
  await runCheckScript(t, 'deploy/check-nginx.mjs')
})
