// kube-score's and kube-linter's default checks, as test code: neither binary runs here (no
// internet to fetch them), so each check of theirs that is on by default, and concerns kinds that
// deploy/kubernetes/ holds, is written again from the linter's source, one function a check, under
// the linter's own id: kube-score's in ./kube-score.ts, kube-linter's in ./kube-linter.ts, what both
// read of a build in ./workloads.ts. What each flags, and what it skips, is the linter's; a finding
// says what it says.
import type { Manifest } from '../kustomize.js'
import { kubeLinter, kubeLinterNotApplicable } from './kube-linter.js'
import { kubeScore, kubeScoreNotApplicable } from './kube-score.js'
import type { Finding } from './workloads.js'

/** Every default check of each linter, as its documentation lists them: implemented, or not applicable. */
export const DEFAULT_CHECKS = {
  'kube-score': [
    'deployment-strategy', 'deployment-replicas', 'ingress-targets-service', 'cronjob-has-deadline', 'cronjob-restartpolicy',
    'container-resources', 'container-image-tag', 'container-image-pull-policy', 'container-ephemeral-storage-request-and-limit',
    'environment-variable-key-duplication', 'statefulset-has-poddisruptionbudget', 'deployment-has-poddisruptionbudget',
    'poddisruptionbudget-has-policy', 'pod-networkpolicy', 'networkpolicy-targets-pod', 'pod-probes', 'pod-probes-identical',
    'container-security-context-user-group-id', 'container-security-context-privileged', 'container-security-context-readonlyrootfilesystem',
    'service-targets-pod', 'service-type', 'stable-version', 'deployment-has-host-podantiaffinity', 'statefulset-has-host-podantiaffinity',
    'deployment-targeted-by-hpa-does-not-have-replicas-configured', 'statefulset-has-servicename',
    'deployment-pod-selector-labels-match-template-metadata-labels', 'statefulset-pod-selector-labels-match-template-metadata-labels',
    'label-values', 'horizontalpodautoscaler-has-target', 'horizontalpodautoscaler-replicas', 'pod-topology-spread-constraints'
  ],
  'kube-linter': [
    'dangling-service', 'deprecated-service-account-field', 'docker-sock', 'drop-net-raw-capability', 'duplicate-env-var', 'env-var-secret',
    'host-ipc', 'host-network', 'host-pid', 'invalid-target-ports', 'job-ttl-seconds-after-finished', 'latest-tag', 'liveness-port',
    'mismatching-selector', 'no-anti-affinity', 'no-extensions-v1beta', 'no-read-only-root-fs', 'non-existent-service-account',
    'pdb-max-unavailable', 'pdb-min-available', 'privilege-escalation-container', 'privileged-container', 'readiness-port', 'run-as-non-root',
    'sensitive-host-mounts', 'ssh-port', 'startup-port', 'unsafe-sysctls', 'unset-cpu-requirements', 'unset-memory-requirements',
    'pdb-unhealthy-pod-eviction-policy'
  ]
}

/** Both linters: their checks and the ones that do not apply here, by linter. */
export const LINTERS = {
  'kube-score': { checks: kubeScore, notApplicable: kubeScoreNotApplicable },
  'kube-linter': { checks: kubeLinter, notApplicable: kubeLinterNotApplicable }
}

export type Linter = keyof typeof LINTERS

/** Every finding of every implemented check of both linters on a build. */
export function lint (objects: Manifest[]): Array<Finding & { linter: Linter, check: string }> {
  return Object.entries(LINTERS).flatMap(([linter, { checks }]) => Object.entries(checks).flatMap(([check, run]) =>
    run(objects).map((finding) => ({ linter: linter as Linter, check, ...finding }))))
}
