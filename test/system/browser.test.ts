// Swagger UI, and the client's program from another origin, in Debian's Chromium against the built
// service (test/browser/, also `npm run test:browser`): each of their checks an assertion.
import t from 'tap'
import { runCheckScript } from '../helpers/check-script.js'

t.test('Swagger UI in Chromium, with and without a prefix', async (t) => {
  await runCheckScript(t, 'test/browser/swagger-ui.js')
})

t.test('the client\'s program in Chromium, from another origin', async (t) => {
  await runCheckScript(t, 'test/browser/client.js')
})
