import t from 'tap'
import { UNKNOWN_COMMIT, buildInfo } from '../../../lib/metrics/build-info.js'
import { packageInfo } from '../../../lib/package-info.js'

t.test('app_build_info: the version of package.json, the commit of GIT_COMMIT, Node\'s version; always 1', async (t) => {
  t.equal(buildInfo({ GIT_COMMIT: ' 4f2a9c1 ' }, 'v24.0.0'), [
    '# HELP app_build_info What runs: the version of package.json, the commit built (GIT_COMMIT), the Node version; always 1',
    '# TYPE app_build_info gauge',
    `app_build_info{version="${packageInfo.version}",commit="4f2a9c1",node_version="v24.0.0"} 1`,
    ''
  ].join('\n'))
  for (const env of [{}, { GIT_COMMIT: '' }, { GIT_COMMIT: '  ' }]) {
    t.match(buildInfo(env), `commit="${UNKNOWN_COMMIT}"`, `GIT_COMMIT ${JSON.stringify(env.GIT_COMMIT)}: unknown`)
  }
  t.match(buildInfo({}), `node_version="${process.version}"`, 'this Node by default')
})
