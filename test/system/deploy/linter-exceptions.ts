// What kube-score's and kube-linter's default checks find in deploy/kubernetes/ and is kept on
// purpose, each with its reason: test/deploy/kube-checks.test.ts fails on any other finding, and on
// an exception here that no longer finds anything. With the linters themselves:
//   kube-score score --ignore-container-cpu-limit --ignore-test container-image-pull-policy
// (kube-linter finds nothing).
import type { Linter } from '../../helpers/kube-checks/index.js'

export interface LinterException {
  linter: Linter
  check: string
  /** `Kind/name` of the object the finding is about. */
  object: string
  /** The containers it is about, when the check looks at containers. */
  containers?: string[]
  /** The finding, in the linter's words. */
  message: string
  /** Why the manifests do otherwise. */
  reason: string
}

export const LINTER_EXCEPTIONS: LinterException[] = [
  {
    linter: 'kube-score',
    check: 'container-resources',
    object: 'Deployment/servant-example-api',
    containers: ['migrate', 'api'],
    message: 'CPU limit is not set',
    reason: 'JavaScript runs on one thread: a CPU limit would not bound the request path, only let the CFS quota throttle the ' +
      'garbage collector\'s and compiler\'s bursts on other threads into latency. The CPU request (what the scheduler and the ' +
      'autoscaler count) is set; the memory limit is the one that protects the node.'
  },
  {
    linter: 'kube-score',
    check: 'container-image-pull-policy',
    object: 'Deployment/servant-example-api',
    containers: ['migrate', 'api'],
    message: 'ImagePullPolicy is not set to Always',
    reason: 'IfNotPresent: the overlay pins a release\'s tag (never latest) or its digest, so the copy a node has is that ' +
      'release, and a pod starts from it without asking the registry. With Always, a registry that does not answer would stop ' +
      'the autoscaler\'s new pods and the pods of a drained node. kube-score\'s reason, making every pod show its pull ' +
      'credentials on nodes that several tenants share, is the AlwaysPullImages admission plugin\'s, cluster-wide.'
  }
]
