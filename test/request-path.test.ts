import fs from 'node:fs'
import t from 'tap'
import { DOCUMENT, requestPathDocument } from './helpers/request-path.js'

// docs/request-path.md lists the hooks each route runs: a change to them must update it on purpose.

t.test('docs/request-path.md is the request path of the app as it is', async (t) => {
  const document = await requestPathDocument()
  t.equal(fs.readFileSync(DOCUMENT, 'utf8'), document, 'out of date: run `npm run request-path`, and read what changed')
  t.notMatch(document, /`anonymous`|\(native\)/, 'every hook has a name and a file')
  t.match(document, /\| `GET \/users` \| [A-Z] \| routes\/users\/index\.ts \|/, 'a route, the chain of its hooks and its handler')
  t.match(document, /- onRequest: `countInFlight` \(plugins\/edge\/metrics\.ts\) → `requireHost` \(plugins\/edge\/host\.ts\) → `onRequest` \(@fastify\/under-pressure\) → `answeredUnread` \(plugins\/not-found\.ts\)/, 'hooks in the order they run, with their files')
})
