import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment'
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler'
import type { IIngress } from 'kubernetes-models/networking.k8s.io/v1/Ingress'
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy'
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget'
import type { IContainer } from 'kubernetes-models/v1/Container'
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec'
import type { IService } from 'kubernetes-models/v1/Service'
import { projectRoot } from '../../../lib/project-root.js'
import { DEFAULT_CHECKS, LINTERS, lint, type Linter } from '../../helpers/kube-checks/index.js'
import { kustomize, type Manifest } from '../../helpers/kustomize.js'
import { LINTER_EXCEPTIONS } from './linter-exceptions.js'

// kube-score's and kube-linter's default checks on each overlay of deploy/kubernetes/, as a cluster
// gets it (test/helpers/kube-checks/: the checks written from the linters' sources, as neither
// binary runs here): nothing found but the documented exceptions (./linter-exceptions.ts). Each
// check is shown to find what it is for, on a copy of the example overlay broken that way.

const overlays = path.join(projectRoot, 'deploy', 'kubernetes', 'overlays')
const builds = fs.readdirSync(overlays).map((overlay) => ({ overlay, objects: kustomize(path.join(overlays, overlay)) }))
const example = builds.find(({ overlay }) => overlay === 'example')!.objects

type Finding = ReturnType<typeof lint>[number]

/** The exception that covers a finding, if any. */
const exceptionFor = (finding: Finding) => LINTER_EXCEPTIONS.find((exception) => exception.linter === finding.linter && exception.check === finding.check &&
  exception.object === finding.object && exception.message === finding.message && (finding.container === undefined || exception.containers?.includes(finding.container) === true))

t.test('each overlay passes both linters\' default checks, but for the documented exceptions', async (t) => {
  t.ok(builds.length > 0, 'overlays are built')
  for (const { overlay, objects } of builds) {
    const findings = lint(objects)
    t.same(findings.filter((finding) => exceptionFor(finding) === undefined), [], `${overlay}: nothing else found`)
    for (const exception of LINTER_EXCEPTIONS) {
      const covered = findings.filter((finding) => exceptionFor(finding) === exception)
      t.ok(covered.length > 0, `${overlay}: ${exception.linter} ${exception.check} still finds "${exception.message}" (else the exception goes)`)
      t.same(new Set(covered.map((finding) => finding.container)), new Set(exception.containers ?? [undefined]), `${overlay}: in the containers it names, no more`)
    }
  }
})

t.test('every exception says why', async (t) => {
  for (const exception of LINTER_EXCEPTIONS) {
    t.ok(exception.reason.split(/\s+/).length >= 20, `${exception.linter} ${exception.check}: a reason of some sentences`)
    t.ok(DEFAULT_CHECKS[exception.linter].includes(exception.check), `${exception.check} is a default check of ${exception.linter}`)
  }
  const keys = LINTER_EXCEPTIONS.map(({ linter, check, object, message }) => `${linter} ${check} ${object} ${message}`)
  t.equal(new Set(keys).size, keys.length, 'each finding excepted once')
})

t.test('every default check of both linters is written here, or concerns a kind the overlays have none of', async (t) => {
  for (const [linter, { checks, notApplicable }] of Object.entries(LINTERS) as Array<[Linter, typeof LINTERS[Linter]]>) {
    const defaults = DEFAULT_CHECKS[linter]
    t.same(defaults.filter((check) => !(check in checks) && !(check in notApplicable)), [], `${linter}: none left out`)
    t.same([...Object.keys(checks), ...Object.keys(notApplicable)].filter((check) => !defaults.includes(check)), [], `${linter}: none that is not a default check`)
    for (const [check, kinds] of Object.entries(notApplicable)) {
      for (const { overlay, objects } of builds) {
        t.notOk(objects.some((object) => kinds.includes(object.kind)), `${linter} ${check}: ${overlay} has no ${kinds.join(' or ')}`)
      }
    }
  }
})

/** The parts of a copy of a build that the fixtures break. */
function parts (objects: Manifest[]) {
  const one = <T>(kind: string) => objects.find((object) => object.kind === kind) as unknown as T & Manifest
  const deployment = one<IDeployment>('Deployment')
  const pod = deployment.spec!.template.spec! as IPodSpec & { serviceAccount?: string }
  const container = (name: string) => [...pod.initContainers ?? [], ...pod.containers].find((c) => c.name === name) as IContainer
  return {
    deployment,
    pod,
    api: container('api'),
    migrate: container('migrate'),
    service: one<IService>('Service'),
    ingress: one<IIngress>('Ingress'),
    pdb: one<IPodDisruptionBudget>('PodDisruptionBudget'),
    hpa: one<IHorizontalPodAutoscaler>('HorizontalPodAutoscaler'),
    policy: one<INetworkPolicy>('NetworkPolicy'),
    /** Mounts a host directory into the API container. */
    mountHost (hostPath: string) {
      pod.volumes = [{ name: 'host', hostPath: { path: hostPath } }]
      container('api').volumeMounts = [{ name: 'host', mountPath: '/host' }]
    }
  }
}

type Parts = ReturnType<typeof parts>

/**
 * For each check, a way to break the example overlay that it must find; and, for a check whose
 * finding is excepted, what makes it pass first, so that the break is what it finds.
 */
const FIXTURES: Record<Linter, Record<string, { passes?: (p: Parts) => void, breaks: (p: Parts, objects: Manifest[]) => void }>> = {
  'kube-score': {
    'deployment-strategy': { breaks: ({ deployment }) => { deployment.spec!.strategy = { type: 'Recreate' } } },
    'deployment-replicas': { breaks: ({ hpa }, objects) => { objects.splice(objects.indexOf(hpa as Manifest), 1) } },
    'ingress-targets-service': { breaks: ({ ingress }) => { ingress.spec!.rules![0]!.http!.paths[0]!.backend.service!.name = 'elsewhere' } },
    'container-resources': {
      passes: ({ api, migrate }) => { for (const c of [api, migrate]) c.resources!.limits!.cpu = '1' },
      breaks: ({ api }) => { delete api.resources!.limits!.memory }
    },
    'container-image-tag': { breaks: ({ api }) => { api.image = 'registry.example.com/servant-example-api:latest' } },
    'container-image-pull-policy': {
      passes: ({ api, migrate }) => { for (const c of [api, migrate]) c.imagePullPolicy = 'Always' },
      breaks: ({ migrate }) => { migrate.imagePullPolicy = 'IfNotPresent' }
    },
    'container-ephemeral-storage-request-and-limit': { breaks: ({ migrate }) => { delete migrate.resources!.requests!['ephemeral-storage'] } },
    'environment-variable-key-duplication': { breaks: ({ api }) => { api.env!.push({ ...api.env![0]! }) } },
    'deployment-has-poddisruptionbudget': { breaks: ({ pdb }) => { pdb.spec!.selector = { matchLabels: { 'app.kubernetes.io/name': 'another' } } } },
    'poddisruptionbudget-has-policy': { breaks: ({ pdb }) => { delete pdb.spec!.maxUnavailable } },
    'pod-networkpolicy': { breaks: ({ policy }) => { policy.spec!.policyTypes = ['Ingress']; delete policy.spec!.egress } },
    'networkpolicy-targets-pod': { breaks: ({ policy }) => { policy.spec!.podSelector = { matchLabels: { 'app.kubernetes.io/name': 'another' } } } },
    'pod-probes': { breaks: ({ api }) => { delete api.readinessProbe } },
    'pod-probes-identical': { breaks: ({ api }) => { api.readinessProbe = structuredClone(api.livenessProbe) } },
    'container-security-context-user-group-id': { breaks: ({ pod }) => { pod.securityContext!.runAsUser = 1000 } },
    'container-security-context-privileged': { breaks: ({ api }) => { api.securityContext!.privileged = true } },
    'container-security-context-readonlyrootfilesystem': { breaks: ({ migrate }) => { migrate.securityContext!.readOnlyRootFilesystem = false } },
    'service-targets-pod': { breaks: ({ service }) => { service.spec!.selector = { 'app.kubernetes.io/name': 'another' } } },
    'service-type': { breaks: ({ service }) => { service.spec!.type = 'NodePort' } },
    'stable-version': { breaks: ({ hpa }) => { (hpa as Manifest).apiVersion = 'autoscaling/v2beta2' } },
    'deployment-has-host-podantiaffinity': { breaks: ({ pod }) => { delete pod.affinity } },
    'deployment-targeted-by-hpa-does-not-have-replicas-configured': { breaks: ({ deployment }) => { deployment.spec!.replicas = 3 } },
    'deployment-pod-selector-labels-match-template-metadata-labels': { breaks: ({ deployment }) => { deployment.spec!.selector = { matchLabels: { 'app.kubernetes.io/name': 'another' } } } },
    'label-values': { breaks: ({ service }) => { service.metadata!.labels!.tier = 'front end' } },
    'horizontalpodautoscaler-has-target': { breaks: ({ hpa }) => { hpa.spec!.scaleTargetRef.name = 'another' } },
    'horizontalpodautoscaler-replicas': { breaks: ({ hpa }) => { hpa.spec!.minReplicas = 1 } },
    'pod-topology-spread-constraints': { breaks: ({ pod }) => { pod.topologySpreadConstraints![0]!.whenUnsatisfiable = 'Sometimes' as 'ScheduleAnyway' } }
  },
  'kube-linter': {
    'dangling-service': { breaks: ({ service }) => { service.spec!.selector = { 'app.kubernetes.io/name': 'another' } } },
    'deprecated-service-account-field': { breaks: ({ pod }) => { pod.serviceAccount = 'legacy' } },
    'docker-sock': { breaks: (p) => { p.mountHost('/var/run/docker.sock') } },
    'drop-net-raw-capability': { breaks: ({ api }) => { api.securityContext!.capabilities = { drop: ['CHOWN'] } } },
    'duplicate-env-var': { breaks: ({ api }) => { api.env!.push({ ...api.env![0]! }) } },
    'env-var-secret': { breaks: ({ api }) => { api.env!.push({ name: 'CLIENT_SECRET', value: 'hunter2' }) } },
    'host-ipc': { breaks: ({ pod }) => { pod.hostIPC = true } },
    'host-network': { breaks: ({ pod }) => { pod.hostNetwork = true } },
    'host-pid': { breaks: ({ pod }) => { pod.hostPID = true } },
    'invalid-target-ports': { breaks: ({ service }) => { service.spec!.ports![0]!.targetPort = 'HTTP_PORT' } },
    'latest-tag': { breaks: ({ migrate }) => { migrate.image = 'registry.example.com/servant-example-api' } },
    'liveness-port': { breaks: ({ api }) => { api.livenessProbe!.httpGet!.port = 'admin' } },
    'mismatching-selector': { breaks: ({ deployment }) => { deployment.spec!.selector = { matchLabels: { 'app.kubernetes.io/name': 'another' } } } },
    'no-anti-affinity': { breaks: ({ deployment, pod }) => { deployment.spec!.replicas = 3; delete pod.affinity } },
    'no-extensions-v1beta': { breaks: ({ ingress }) => { (ingress as Manifest).apiVersion = 'extensions/v1beta1' } },
    'no-read-only-root-fs': { breaks: ({ api }) => { delete api.securityContext!.readOnlyRootFilesystem } },
    'non-existent-service-account': { breaks: ({ pod }) => { pod.serviceAccountName = 'servant-example-api' } },
    'pdb-max-unavailable': { breaks: ({ pdb }) => { pdb.spec!.maxUnavailable = 0 } },
    // The example overlay's autoscaler keeps 3 pods at least: a budget of 3 never lets one go.
    'pdb-min-available': { breaks: ({ pdb }) => { delete pdb.spec!.maxUnavailable; pdb.spec!.minAvailable = 3 } },
    'privilege-escalation-container': { breaks: ({ api }) => { api.securityContext!.allowPrivilegeEscalation = true } },
    'privileged-container': { breaks: ({ migrate }) => { migrate.securityContext!.privileged = true } },
    'readiness-port': { breaks: ({ api }) => { api.readinessProbe!.httpGet!.port = 8080 } },
    'run-as-non-root': { breaks: ({ pod }) => { pod.securityContext!.runAsGroup = 0 } },
    'sensitive-host-mounts': { breaks: (p) => { p.mountHost('/etc') } },
    'ssh-port': { breaks: ({ api }) => { api.ports!.push({ name: 'ssh', containerPort: 22 }) } },
    'startup-port': { breaks: ({ api }) => { api.startupProbe!.httpGet!.port = 'metric' } },
    'unsafe-sysctls': { breaks: ({ pod }) => { pod.securityContext!.sysctls = [{ name: 'net.core.somaxconn', value: '1024' }] } },
    'unset-cpu-requirements': { breaks: ({ migrate }) => { delete migrate.resources!.requests!.cpu } },
    'unset-memory-requirements': { breaks: ({ api }) => { delete api.resources!.limits!.memory } },
    'pdb-unhealthy-pod-eviction-policy': { breaks: ({ pdb }) => { delete pdb.spec!.unhealthyPodEvictionPolicy } }
  }
}

t.test('each check finds what it is for: it passes on the example overlay, and fails once that is broken', async (t) => {
  for (const [linter, { checks }] of Object.entries(LINTERS) as Array<[Linter, typeof LINTERS[Linter]]>) {
    t.same(Object.keys(FIXTURES[linter]).sort(), Object.keys(checks).sort(), `${linter}: a fixture for each check`)
    for (const [check, run] of Object.entries(checks)) {
      const fixture = FIXTURES[linter][check]
      if (fixture === undefined) continue
      const objects = structuredClone(example)
      const p = parts(objects)
      fixture.passes?.(p)
      t.same(run(objects), [], `${linter} ${check}: passes`)
      fixture.breaks(p, objects)
      t.ok(run(objects).length > 0, `${linter} ${check}: fails when broken`)
    }
  }
})
