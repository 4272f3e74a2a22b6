// kube-linter's default checks, written from its source (stackrox/kube-linter,
// internal/defaultchecks and pkg/templates).
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler'
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget'
import type { IContainer } from 'kubernetes-models/v1/Container'
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec'
import type { IService } from 'kubernetes-models/v1/Service'
import type { Manifest } from '../kustomize.js'
import { quantity } from '../quantity.js'
import { allContainers, mapSelects, name, namespaceOf, ofKind, selects, workloads, type Check, type Selector } from './workloads.js'

/** A kube-linter check on each container of each workload (init containers too, unless `withInit` is false). */
const perContainer = (check: (container: IContainer) => string[], withInit = true): Check => (objects) => workloads(objects).flatMap(({ object, pod }) =>
  (withInit ? allContainers(pod) : pod.containers).flatMap((container) => check(container).map((message) => ({ object: name(object), container: container.name, message }))))

/** A kube-linter check on each workload's pod spec. */
const perPod = (check: (pod: IPodSpec, object: Manifest, objects: Manifest[]) => string[]): Check => (objects) => workloads(objects).flatMap(({ object, pod }) =>
  check(pod, object, objects).map((message) => ({ object: name(object), message })))

/** A port name as Kubernetes's IsValidPortName takes it (an IANA service name): what is wrong with it, if anything. */
function portNameProblems (port: string): string[] {
  return [
    ...port.length > 15 ? ['must be no more than 15 characters'] : [],
    ...!/^[-a-z0-9]+$/.test(port) ? ['must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)'] : [],
    ...port.includes('--') ? ['must not contain consecutive hyphens'] : [],
    ...!/[a-z]/.test(port) ? ['must contain at least one letter (a-z)'] : [],
    ...port.startsWith('-') || port.endsWith('-') ? ['must not begin or end with a hyphen'] : []
  ]
}

/** kube-linter's probe-port checks: the probe's port is one the container exposes over TCP, by number or name. */
const probePort = (which: 'livenessProbe' | 'readinessProbe' | 'startupProbe'): Check => perContainer((container) => {
  const probe = container[which]
  if (probe === undefined) return []
  const exposed = new Set<string | number>((container.ports ?? []).filter((port) => port.protocol === undefined || port.protocol === 'TCP').flatMap((port) => [port.containerPort, port.name ?? '']))
  const port = probe.httpGet?.port ?? probe.tcpSocket?.port ?? probe.grpc?.port
  return port === undefined || exposed.has(port) ? [] : [`container "${container.name}" does not expose port ${port} for the ${which}`]
}, false)

/** kube-linter's host-mounts template: host directories matching `dirs` mounted in a container. */
const hostMounts = (dirs: RegExp[]): Check => perPod((pod) => (pod.volumes ?? []).flatMap((volume) => {
  const hostPath = volume.hostPath?.path
  if (hostPath === undefined) return []
  return dirs.filter((dir) => dir.test(hostPath)).flatMap(() => allContainers(pod)
    .filter((container) => (container.volumeMounts ?? []).some((mount) => mount.name === volume.name))
    .map((container) => `host system directory "${hostPath}" is mounted on container "${container.name}"`))
}))

/** The effective value of a security setting: the container's, else the pod's. */
const effective = <K extends 'runAsUser' | 'runAsGroup' | 'runAsNonRoot'>(pod: IPodSpec, container: IContainer, key: K) =>
  container.securityContext?.[key] ?? pod.securityContext?.[key]

/** kube-linter's default checks (internal/defaultchecks), for the kinds they concern. */
export const kubeLinter: Record<string, Check> = {
  /** A Service (but ExternalName) has a selector, which selects the pods of some workload of its namespace. */
  'dangling-service': (objects) => ofKind<IService>(objects, 'Service').flatMap((service) => {
    if (service.spec?.type === 'ExternalName') return []
    const selector = service.spec?.selector ?? {}
    if (Object.keys(selector).length === 0) return [{ object: name(service), message: 'service has no selector specified' }]
    return workloads(objects).some(({ object, labels }) => namespaceOf(object) === namespaceOf(service) && mapSelects(selector, labels))
      ? []
      : [{ object: name(service), message: `no pods found matching service labels (${JSON.stringify(selector)})` }]
  }),

  /** No pod uses the deprecated serviceAccount field unless it names serviceAccountName's account. */
  'deprecated-service-account-field': perPod((pod) => {
    const { serviceAccount, serviceAccountName } = pod as IPodSpec & { serviceAccount?: string }
    return serviceAccount !== undefined && serviceAccount !== '' && serviceAccount !== serviceAccountName ? [`serviceAccount is specified (${serviceAccount}), but this field is deprecated; use serviceAccountName instead`] : []
  }),

  /** No container mounts the host's Docker socket. */
  'docker-sock': hostMounts([/docker\.sock$/]),

  /** A container whose security context lists capabilities drops NET_RAW (or ALL) and does not add it (or ALL). */
  'drop-net-raw-capability': perContainer((container) => {
    const capabilities = container.securityContext?.capabilities
    if (capabilities === undefined) return []
    const isAll = (capability: string) => /^all$/i.test(capability)
    return [
      ...(capabilities.add ?? []).filter((capability) => /NET_RAW/.test(capability) || isAll(capability)).map((capability) => `container "${container.name}" has ADD capability: "${capability}"`),
      ...(capabilities.drop ?? []).some((capability) => /NET_RAW/.test(capability) || isAll(capability)) ? [] : [`container "${container.name}" does not drop capability "NET_RAW"`]
    ]
  }),

  /** No container sets a variable twice in `env`. */
  'duplicate-env-var': perContainer((container) => {
    const names = (container.env ?? []).map((variable) => variable.name)
    return names.filter((variable, i) => names.indexOf(variable) === i && names.indexOf(variable, i + 1) !== -1)
      .map((variable) => `Duplicate environment variable ${variable} in container "${container.name}" found`)
  }),

  /** No variable whose name says "secret" has its value written in the manifest. */
  'env-var-secret': perContainer((container) => (container.env ?? [])
    .filter((variable) => /.*secret.*/i.test(variable.name) && /.+/.test(variable.value ?? ''))
    .map((variable) => `environment variable ${variable.name} in container "${container.name}" found`)),

  /** No pod shares the host's IPC namespace. */
  'host-ipc': perPod((pod) => pod.hostIPC === true ? ['resource shares host\'s IPC namespace (via hostIPC=true).'] : []),

  /** No pod shares the host's network namespace. */
  'host-network': perPod((pod) => pod.hostNetwork === true ? ['resource shares host\'s network namespace (via hostNetwork=true).'] : []),

  /** No pod shares the host's process namespace. */
  'host-pid': perPod((pod) => pod.hostPID === true ? ['object shares the host\'s process namespace (via hostPID=true).'] : []),

  /** Container port names, and Services' target ports, are valid port names or numbers. */
  'invalid-target-ports': (objects) => [
    ...perContainer((container) => (container.ports ?? []).flatMap((port) => port.name === undefined || port.name === ''
      ? []
      : portNameProblems(port.name).map((problem) => `port name "${port.name}" in container "${container.name}" ${problem}`)))(objects),
    ...ofKind<IService>(objects, 'Service').flatMap((service) => (service.spec?.ports ?? []).flatMap(({ targetPort }) => {
      if (targetPort === undefined || targetPort === 0) return []
      const problems = typeof targetPort === 'string' ? portNameProblems(targetPort) : targetPort >= 1 && targetPort <= 65535 ? [] : ['must be between 1 and 65535, inclusive']
      return problems.map((problem) => ({ object: name(service), message: `port targetPort "${targetPort}" in service "${service.metadata.name}" ${problem}` }))
    }))
  ],

  /** No image is latest, or untagged: its BlockList, the three patterns below, matched anywhere in the image. */
  'latest-tag': perContainer((container) => [/.*:(latest)$/, /^[^:]*$/, /(.*\/[^:]+)$/].some((blocked) => blocked.test(container.image ?? ''))
    ? [`The container "${container.name}" is using an invalid container image, "${container.image}"`]
    : []),

  /** A container's liveness probe is on a port it exposes. */
  'liveness-port': probePort('livenessProbe'),

  /** A workload has a selector (Jobs aside), which selects its pod template's labels. */
  'mismatching-selector': (objects) => workloads(objects).flatMap(({ object, labels }) => {
    if (object.kind === 'Pod' || object.kind === 'Job' || object.kind === 'CronJob') return []
    const selector = (object.spec as { selector?: Selector } | undefined)?.selector
    if (selector === undefined || (Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0)) return [{ object: name(object), message: 'object has no selector specified' }]
    return selects(selector, labels) ? [] : [{ object: name(object), message: `labels in pod spec (${JSON.stringify(labels)}) do not match labels in selector (${JSON.stringify(selector)})` }]
  }),

  /** A workload of 2 or more replicas (unset: 1) prefers or requires its pods on different hosts (kubernetes.io/hostname), in its namespace. */
  'no-anti-affinity': (objects) => workloads(objects).flatMap(({ object, pod, labels }) => {
    const replicas = (object.spec as { replicas?: number } | undefined)?.replicas ?? 1
    if (!['Deployment', 'StatefulSet', 'ReplicaSet', 'ReplicationController'].includes(object.kind) || replicas < 2) return []
    const anti = pod.affinity?.podAntiAffinity
    const terms = [...(anti?.preferredDuringSchedulingIgnoredDuringExecution ?? []).map((preferred) => preferred.podAffinityTerm), ...anti?.requiredDuringSchedulingIgnoredDuringExecution ?? []]
    if (terms.length === 0) return [{ object: name(object), message: `object has ${replicas} replicas but does not specify inter pod anti-affinity` }]
    return terms.some((term) => (term.namespaces === undefined || term.namespaces.length === 0 || term.namespaces.includes(namespaceOf(object))) &&
      term.topologyKey === 'kubernetes.io/hostname' && selects(term.labelSelector, labels))
      ? []
      : [{ object: name(object), message: 'anti-affinity does not keep the pods on different hosts' }]
  }),

  /** No object is of the extensions/v1beta API group and versions. */
  'no-extensions-v1beta': (objects) => objects
    .filter((object) => {
      const [group, version] = object.apiVersion.includes('/') ? object.apiVersion.split('/') : ['', object.apiVersion]
      return /extensions/.test(group!) && /v1beta.+/.test(version!)
    })
    .map((object) => ({ object: name(object), message: `disallowed API object found: ${object.apiVersion} ${object.kind}` })),

  /** Every container, init containers too, has a read-only root filesystem. */
  'no-read-only-root-fs': perContainer((container) => container.securityContext?.readOnlyRootFilesystem === true ? [] : [`container "${container.name}" does not have a read-only root file system`]),

  /** A pod's service account (but default) is a ServiceAccount of the build, in its namespace. */
  'non-existent-service-account': perPod((pod, object, objects) => {
    const account = pod.serviceAccountName || (pod as { serviceAccount?: string }).serviceAccount || ''
    if (account === '' || account === 'default') return []
    return objects.some((other) => other.apiVersion === 'v1' && other.kind === 'ServiceAccount' && namespaceOf(other) === namespaceOf(object) && other.metadata.name === account)
      ? []
      : [`serviceAccount "${account}" not found`]
  }),

  /** A PodDisruptionBudget's maxUnavailable is not 0 (nor 0 %). */
  'pdb-max-unavailable': (objects) => ofKind<IPodDisruptionBudget>(objects, 'PodDisruptionBudget')
    .filter((pdb) => pdb.spec?.maxUnavailable !== undefined && Number.parseFloat(String(pdb.spec.maxUnavailable)) === 0)
    .map((pdb) => ({ object: name(pdb), message: 'MaxUnavailable is set to 0' })),

  /** A PodDisruptionBudget's minAvailable leaves each workload it selects a pod to lose (replicas unset or 1: the HPA's minReplicas). */
  'pdb-min-available': (objects) => ofKind<IPodDisruptionBudget>(objects, 'PodDisruptionBudget').flatMap((pdb) => {
    const minAvailable = pdb.spec?.minAvailable
    if (minAvailable === undefined) return []
    const percent = typeof minAvailable === 'string' && minAvailable.endsWith('%')
    const value = Number.parseInt(String(minAvailable), 10)
    if (percent && value === 100) return [{ object: name(pdb), message: 'PDB has minimum available replicas set to 100 percent of replicas' }]
    if (pdb.spec?.selector === undefined) return [{ object: name(pdb), message: 'PDB is missing required selector field' }]
    return workloads(objects).filter(({ object }) => ['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'ReplicationController'].includes(object.kind) && namespaceOf(object) === namespaceOf(pdb) &&
      selects(pdb.spec?.selector, (object.spec as { selector?: Selector }).selector?.matchLabels ?? {}))
      .flatMap(({ object }) => {
        let replicas = (object.spec as { replicas?: number }).replicas ?? 1
        if (replicas === 1) {
          const hpa = ofKind<IHorizontalPodAutoscaler>(objects, 'HorizontalPodAutoscaler').find((candidate) => namespaceOf(candidate) === namespaceOf(pdb) && candidate.spec?.scaleTargetRef.name === object.metadata.name)
          replicas = hpa?.spec?.minReplicas ?? replicas
        }
        const needed = percent ? Math.ceil(replicas * value / 100) : value
        return replicas <= needed ? [{ object: name(pdb), message: `The current number of replicas for deployment ${object.metadata.name} is equal to or lower than the minimum number of replicas specified by its PDB.` }] : []
      })
  }),

  /** No container allows privilege escalation: allowPrivilegeEscalation true, privileged, or SYS_ADMIN added. */
  'privilege-escalation-container': perContainer((container) => {
    const security = container.securityContext
    if (security?.allowPrivilegeEscalation === true) return [`container "${container.name}" has AllowPrivilegeEscalation set to true.`]
    if (security?.privileged === true) return [`container "${container.name}" is Privileged hence allows privilege escalation.`]
    if (security?.capabilities?.add?.includes('SYS_ADMIN') === true) return [`container "${container.name}" has SYS_ADMIN capability hence allows privilege escalation.`]
    return []
  }),

  /** No container is privileged. */
  'privileged-container': perContainer((container) => container.securityContext?.privileged === true ? [`container "${container.name}" is privileged`] : []),

  /** A container's readiness probe is on a port it exposes. */
  'readiness-port': probePort('readinessProbe'),

  /** Every container runs as a user that is not root (runAsUser above 0, or runAsNonRoot and no runAsUser 0), and not in group 0. */
  'run-as-non-root': perPod((pod) => allContainers(pod).flatMap((container) => {
    const group = effective(pod, container, 'runAsGroup')
    const user = effective(pod, container, 'runAsUser')
    const problems = group === 0 ? [`container "${container.name}" is set to runAsGroup 0`] : []
    if (user !== undefined && user > 0) return problems
    if (effective(pod, container, 'runAsNonRoot') === true) return user === 0 ? [...problems, `container "${container.name}" is set to runAsNonRoot, but runAsUser set to 0`] : problems
    return [...problems, `container "${container.name}" is not set to runAsNonRoot`]
  })),

  /** No container mounts a sensitive host directory (/, /boot, /dev, /etc, /lib, /proc, /sys, /usr). */
  'sensitive-host-mounts': hostMounts([/^\/$/, /^\/boot$/, /^\/dev$/, /^\/etc$/, /^\/lib$/, /^\/proc$/, /^\/sys$/, /^\/usr$/]),

  /** No container exposes port 22 over TCP. */
  'ssh-port': perContainer((container) => (container.ports ?? [])
    .filter((port) => port.containerPort === 22 && /TCP/.test(port.protocol ?? 'TCP'))
    .map(() => `port 22 and protocol TCP in container "${container.name}" found`)),

  /** A container's startup probe is on a port it exposes. */
  'startup-port': probePort('startupProbe'),

  /** No pod sets an unsafe sysctl (kernel.msg*, kernel.sem*, kernel.shm*, fs.mqueue.*, net.*). */
  'unsafe-sysctls': perPod((pod) => (pod.securityContext?.sysctls ?? [])
    .filter((sysctl) => ['kernel.msg', 'kernel.sem', 'kernel.shm', 'fs.mqueue.', 'net.'].some((prefix) => sysctl.name.startsWith(prefix)))
    .map((sysctl) => `resource specifies unsafe sysctl "${sysctl.name}".`)),

  /** Every container requests some CPU (its parameters: the request, between 0 and 0 millicores, is flagged). */
  'unset-cpu-requirements': perContainer((container) => Math.round(quantity(container.resources?.requests?.cpu) * 1000) === 0 ? [`container "${container.name}" has cpu request 0`] : []),

  /** Every container has a memory limit (its parameters: the limit, between 0 and 0 MB, is flagged). */
  'unset-memory-requirements': perContainer((container) => quantity(container.resources?.limits?.memory) === 0 ? [`container "${container.name}" has memory limit 0`] : []),

  /** A PodDisruptionBudget says what becomes of unhealthy pods (unhealthyPodEvictionPolicy). */
  'pdb-unhealthy-pod-eviction-policy': (objects) => ofKind<IPodDisruptionBudget>(objects, 'PodDisruptionBudget')
    .filter((pdb) => pdb.spec?.unhealthyPodEvictionPolicy === undefined)
    .map((pdb) => ({ object: name(pdb), message: 'unhealthyPodEvictionPolicy is not explicitly set' }))
}

/** kube-linter's default checks of kinds deploy/kubernetes/ has none of: each with those kinds. */
export const kubeLinterNotApplicable: Record<string, string[]> = {
  'job-ttl-seconds-after-finished': ['Job', 'CronJob']
}
