// kube-score's and kube-linter's default checks, as test code: neither binary runs here (no
// internet to fetch them), so each check of theirs that is on by default, and concerns kinds that
// deploy/kubernetes/ holds, is written again from the linter's source, one function a check, under
// the linter's own id: kube-score (zegl/kube-score, score/: README_CHECKS.md lists the checks and
// which are on by default) and kube-linter (stackrox/kube-linter, internal/defaultchecks and
// pkg/templates). What each flags, and what it skips, is the linter's; a finding says what it says.
// kube-score grades a check; any grade but "all OK" is a finding here (its warnings too).
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment'
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler'
import type { IIngress } from 'kubernetes-models/networking.k8s.io/v1/Ingress'
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy'
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget'
import type { IContainer } from 'kubernetes-models/v1/Container'
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec'
import type { IPodTemplateSpec } from 'kubernetes-models/v1/PodTemplateSpec'
import type { IProbe } from 'kubernetes-models/v1/Probe'
import type { IService } from 'kubernetes-models/v1/Service'
import type { Manifest } from './kustomize.js'
import { quantity } from './quantity.js'

/** What a check found: in which object (and container), and the linter's words for it. */
export interface Finding {
  object: string
  container?: string
  message: string
}

/** A check: every object of a build in, what it finds out. */
export type Check = (objects: Manifest[]) => Finding[]

interface Selector { matchLabels?: Record<string, string>, matchExpressions?: Array<{ key: string, operator: string, values?: string[] }> }

const name = (object: Manifest) => `${object.kind}/${object.metadata.name}`
const namespaceOf = (object: Manifest) => object.metadata.namespace ?? ''
const ofKind = <T>(objects: Manifest[], kind: string) => objects.filter((object) => object.kind === kind) as unknown as Array<T & Manifest>

/** The kinds whose objects run pods from a template (kube-score's PodSpecer, kube-linter's DeploymentLike), and Pod. */
const POD_TEMPLATE_KINDS = ['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job', 'CronJob', 'ReplicationController', 'Pod']

/** An object's pod template (a Pod is its own), or undefined for other kinds. */
export function podTemplate (object: Manifest): IPodTemplateSpec | undefined {
  if (!POD_TEMPLATE_KINDS.includes(object.kind)) return undefined
  const spec = object.spec as Record<string, unknown> | undefined
  if (object.kind === 'Pod') return { metadata: object.metadata, spec: spec as unknown as IPodSpec }
  if (object.kind === 'CronJob') return (spec?.jobTemplate as { spec?: { template?: IPodTemplateSpec } } | undefined)?.spec?.template
  return spec?.template as IPodTemplateSpec | undefined
}

/** The objects that run pods, with their pod spec and template labels. */
function workloads (objects: Manifest[]) {
  return objects.flatMap((object) => {
    const template = podTemplate(object)
    return template?.spec === undefined ? [] : [{ object, pod: template.spec, labels: template.metadata?.labels ?? {} }]
  })
}

const allContainers = (pod: IPodSpec): IContainer[] => [...pod.initContainers ?? [], ...pod.containers]

/**
 * Whether a label selector selects these labels, as Kubernetes's LabelSelectorAsSelector reads it:
 * none selects nothing, an empty one everything.
 */
export function selects (selector: Selector | undefined | null, labels: Record<string, string>): boolean {
  if (selector === undefined || selector === null) return false
  const byLabels = Object.entries(selector.matchLabels ?? {}).every(([key, value]) => labels[key] === value)
  return byLabels && (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
    switch (operator) {
      case 'In': return key in labels && values.includes(labels[key]!)
      case 'NotIn': return !(key in labels) || !values.includes(labels[key]!)
      case 'Exists': return key in labels
      case 'DoesNotExist': return !(key in labels)
      default: return false
    }
  })
}

/** A Service's or kube-score's selector by map: `{ matchLabels: map }`, so an empty map selects every pod. */
const mapSelects = (map: Record<string, string> | undefined, labels: Record<string, string>) => selects({ matchLabels: map ?? {} }, labels)

/** The image's tag as kube-score reads it: after the last `:`, or none. */
const scoreTag = (image: string | undefined) => {
  const parts = (image ?? '').split(':')
  return parts.length > 1 ? parts.at(-1)! : ''
}

/** A pod-level check of kube-score on each workload: its findings, or none. */
const perWorkload = (check: (workload: ReturnType<typeof workloads>[number], objects: Manifest[]) => Array<Omit<Finding, 'object'>>): Check =>
  (objects) => workloads(objects).flatMap((workload) => check(workload, objects).map((finding) => ({ object: name(workload.object), ...finding })))

/** kube-score's default checks (README_CHECKS.md, "default"), for the kinds they target. */
export const kubeScore: Record<string, Check> = {
  /** A Deployment that a Service targets uses the RollingUpdate strategy (or the default). */
  'deployment-strategy': (objects) => ofKind<IDeployment>(objects, 'Deployment').flatMap((deployment) => {
    const targeted = ofKind<IService>(objects, 'Service').some((service) => namespaceOf(service) === namespaceOf(deployment) && mapSelects(service.spec?.selector, deployment.spec?.template.metadata?.labels ?? {}))
    const type = deployment.spec?.strategy?.type
    return targeted && type !== undefined && type !== 'RollingUpdate' ? [{ object: name(deployment), message: 'Deployment update strategy: not RollingUpdate' }] : []
  }),

  /** A Deployment that a Service targets, and no HPA scales, has at least 2 replicas (unset: 1). */
  'deployment-replicas': (objects) => ofKind<IDeployment>(objects, 'Deployment').flatMap((deployment) => {
    const targeted = ofKind<IService>(objects, 'Service').some((service) => namespaceOf(service) === namespaceOf(deployment) && mapSelects(service.spec?.selector, deployment.spec?.template.metadata?.labels ?? {}))
    const scaled = ofKind<IHorizontalPodAutoscaler>(objects, 'HorizontalPodAutoscaler').some((hpa) => namespaceOf(hpa) === namespaceOf(deployment) &&
      hpa.spec?.scaleTargetRef.apiVersion === deployment.apiVersion && hpa.spec.scaleTargetRef.kind === deployment.kind && hpa.spec.scaleTargetRef.name === deployment.metadata.name)
    return targeted && !scaled && (deployment.spec?.replicas ?? 1) < 2 ? [{ object: name(deployment), message: 'Deployment few replicas' }] : []
  }),

  /** Each path of an Ingress goes to a Service of its namespace, by the port's number or name. */
  'ingress-targets-service': (objects) => ofKind<IIngress>(objects, 'Ingress').flatMap((ingress) =>
    (ingress.spec?.rules ?? []).flatMap((rule) => (rule.http?.paths ?? []).flatMap((route) => {
      const backend = route.backend.service
      const matched = backend !== undefined && ofKind<IService>(objects, 'Service').some((service) =>
        namespaceOf(service) === namespaceOf(ingress) && service.metadata.name === backend.name &&
        (service.spec?.ports ?? []).some((port) => ((backend.port?.number ?? 0) > 0 && port.port === backend.port?.number) || port.name === backend.port?.name))
      return matched ? [] : [{ object: name(ingress), message: `No service match was found for path ${route.path}` }]
    }))),

  /** Every container, init containers too, has CPU and memory requests and limits. */
  'container-resources': perWorkload(({ pod }) => allContainers(pod).flatMap((container) => {
    const { requests = {}, limits = {} } = container.resources ?? {}
    return [
      ...quantity(limits.cpu) === 0 ? ['CPU limit is not set'] : [],
      ...quantity(limits.memory) === 0 ? ['Memory limit is not set'] : [],
      ...quantity(requests.cpu) === 0 ? ['CPU request is not set'] : [],
      ...quantity(requests.memory) === 0 ? ['Memory request is not set'] : []
    ].map((message) => ({ container: container.name, message }))
  })),

  /** Every image has a tag, not latest. */
  'container-image-tag': perWorkload(({ pod }) => allContainers(pod)
    .filter((container) => ['', 'latest'].includes(scoreTag(container.image)))
    .map((container) => ({ container: container.name, message: 'Image with latest tag' }))),

  /** Every container's imagePullPolicy is Always (unset passes only for an untagged or latest image, which Kubernetes then pulls always). */
  'container-image-pull-policy': perWorkload(({ pod }) => allContainers(pod)
    .filter((container) => !(container.imagePullPolicy === undefined && ['', 'latest'].includes(scoreTag(container.image))) && container.imagePullPolicy !== 'Always')
    .map((container) => ({ container: container.name, message: 'ImagePullPolicy is not set to Always' }))),

  /** Every container has an ephemeral-storage request and limit. */
  'container-ephemeral-storage-request-and-limit': perWorkload(({ pod }) => allContainers(pod).flatMap((container) => [
    ...quantity(container.resources?.limits?.['ephemeral-storage']) === 0 ? ['Ephemeral Storage limit is not set'] : [],
    ...quantity(container.resources?.requests?.['ephemeral-storage']) === 0 ? ['Ephemeral Storage request is not set'] : []
  ].map((message) => ({ container: container.name, message })))),

  /** No container sets an environment variable twice in `env`. */
  'environment-variable-key-duplication': perWorkload(({ pod }) => allContainers(pod).flatMap((container) => {
    const names = (container.env ?? []).map((variable) => variable.name)
    return names.filter((variable, i) => names.indexOf(variable) !== i)
      .map((variable) => ({ container: container.name, message: `Container environment variable key '${variable}' is duplicated` }))
  })),

  /** A Deployment of 2 or more replicas (or unset) has a PodDisruptionBudget selecting its pods, in its namespace. */
  'deployment-has-poddisruptionbudget': (objects) => ofKind<IDeployment>(objects, 'Deployment').flatMap((deployment) => {
    if (deployment.spec?.replicas !== undefined && deployment.spec.replicas < 2) return []
    const labels = deployment.spec?.template.metadata?.labels ?? {}
    const matched = ofKind<IPodDisruptionBudget>(objects, 'PodDisruptionBudget').some((pdb) => selects(pdb.spec?.selector, labels) && namespaceOf(pdb) === namespaceOf(deployment))
    return matched ? [] : [{ object: name(deployment), message: 'No matching PodDisruptionBudget was found' }]
  }),

  /** A PodDisruptionBudget sets minAvailable or maxUnavailable. */
  'poddisruptionbudget-has-policy': (objects) => ofKind<IPodDisruptionBudget>(objects, 'PodDisruptionBudget')
    .filter((pdb) => pdb.spec?.minAvailable === undefined && pdb.spec?.maxUnavailable === undefined)
    .map((pdb) => ({ object: name(pdb), message: 'PodDisruptionBudget missing policy' })),

  /** The pods are selected by NetworkPolicies of their namespace for both ingress and egress. */
  'pod-networkpolicy': perWorkload(({ object, labels }, objects) => {
    let ingress = false
    let egress = false
    for (const policy of ofKind<INetworkPolicy>(objects, 'NetworkPolicy')) {
      if (namespaceOf(policy) !== namespaceOf(object) || !selects(policy.spec?.podSelector ?? {}, labels)) continue
      const types = policy.spec?.policyTypes ?? []
      if (types.length === 0) {
        ingress = true
        egress ||= (policy.spec?.egress ?? []).length > 0
      } else {
        ingress ||= types.includes('Ingress')
        egress ||= types.includes('Egress')
      }
    }
    if (ingress && egress) return []
    return [{ message: ingress ? 'The pod does not have a matching egress NetworkPolicy' : egress ? 'The pod does not have a matching ingress NetworkPolicy' : 'The pod does not have a matching NetworkPolicy' }]
  }),

  /** A NetworkPolicy selects some pod of its namespace. */
  'networkpolicy-targets-pod': (objects) => ofKind<INetworkPolicy>(objects, 'NetworkPolicy')
    .filter((policy) => !workloads(objects).some(({ object, labels }) => namespaceOf(object) === namespaceOf(policy) && selects(policy.spec?.podSelector ?? {}, labels)))
    .map((policy) => ({ object: name(policy), message: 'The NetworkPolicys selector doesn\'t match any pods' })),

  /** Pods that a Service targets have a readiness probe, and a liveness probe (Jobs aside). */
  'pod-probes': perWorkload(({ object, pod, labels }, objects) => {
    if (object.kind === 'Job' || object.kind === 'CronJob') return []
    if (!ofKind<IService>(objects, 'Service').some((service) => namespaceOf(service) === namespaceOf(object) && mapSelects(service.spec?.selector, labels))) return []
    if (!allContainers(pod).some((container) => container.readinessProbe !== undefined)) return [{ message: 'Container is missing a readinessProbe' }]
    if (!allContainers(pod).some((container) => container.livenessProbe !== undefined)) return [{ message: 'Container is missing a livenessProbe' }]
    return []
  }),

  /** No container's readiness and liveness probes are the same (path and port, TCP port, or command). */
  'pod-probes-identical': perWorkload(({ object, pod }) => {
    if (object.kind === 'Job' || object.kind === 'CronJob') return []
    const same = (r: IProbe, l: IProbe) => {
      if (r.httpGet !== undefined && l.httpGet !== undefined) return r.httpGet.path === l.httpGet.path && portValue(r.httpGet.port) === portValue(l.httpGet.port)
      if (r.tcpSocket !== undefined && l.tcpSocket !== undefined) return r.tcpSocket.port === l.tcpSocket.port
      if (r.exec !== undefined && l.exec !== undefined) return JSON.stringify(r.exec.command ?? []) === JSON.stringify(l.exec.command ?? [])
      return false
    }
    return allContainers(pod).some((c) => c.readinessProbe !== undefined && c.livenessProbe !== undefined && same(c.readinessProbe, c.livenessProbe))
      ? [{ message: 'Container has the same readiness and liveness probe' }]
      : []
  }),

  /** Every container runs as a user and a group of 10000 or more (its own, or the pod's). */
  'container-security-context-user-group-id': perWorkload(({ pod }) => allContainers(pod).flatMap((container) => {
    if (container.securityContext === undefined && pod.securityContext === undefined) return [{ container: container.name, message: 'Container has no configured security context' }]
    const user = container.securityContext?.runAsUser ?? pod.securityContext?.runAsUser
    const group = container.securityContext?.runAsGroup ?? pod.securityContext?.runAsGroup
    return [
      ...user === undefined || user < 10000 ? ['The container is running with a low user ID'] : [],
      ...group === undefined || group < 10000 ? ['The container running with a low group ID'] : []
    ].map((message) => ({ container: container.name, message }))
  })),

  /** No container is privileged. */
  'container-security-context-privileged': perWorkload(({ pod }) => allContainers(pod)
    .filter((container) => container.securityContext?.privileged === true)
    .map((container) => ({ container: container.name, message: 'The container is privileged' }))),

  /** Every container has a security context with a read-only root filesystem. */
  'container-security-context-readonlyrootfilesystem': perWorkload(({ pod }) => allContainers(pod).flatMap((container) =>
    container.securityContext === undefined
      ? [{ container: container.name, message: 'Container has no configured security context' }]
      : container.securityContext.readOnlyRootFilesystem === true ? [] : [{ container: container.name, message: 'The pod has a container with a writable root filesystem' }])),

  /** A Service (but ExternalName) selects some pod of its namespace. */
  'service-targets-pod': (objects) => ofKind<IService>(objects, 'Service')
    .filter((service) => service.spec?.type !== 'ExternalName' && !workloads(objects).some(({ object, labels }) => namespaceOf(object) === namespaceOf(service) && mapSelects(service.spec?.selector, labels)))
    .map((service) => ({ object: name(service), message: 'The services selector does not match any pods' })),

  /** No Service is of type NodePort. */
  'service-type': (objects) => ofKind<IService>(objects, 'Service')
    .filter((service) => service.spec?.type === 'NodePort')
    .map((service) => ({ object: name(service), message: 'The service is of type NodePort' })),

  /**
   * No object uses an API version that has a stable replacement, run as with
   * `--kubernetes-version v1.30`, the oldest Kubernetes deploy/README.md supports: every replacement
   * below exists there (kube-score's default, v1.18, lets those of 1.19 to 1.23 pass).
   */
  'stable-version': (objects) => objects.flatMap((object) => {
    const replacement = DEPRECATED_APIS[`${object.apiVersion} ${object.kind}`]
    return replacement === undefined ? [] : [{ object: name(object), message: `The apiVersion and kind ${object.apiVersion}/${object.kind} is deprecated: use ${replacement}` }]
  }),

  /** A Deployment of 2 or more replicas (or unset) prefers or requires its pods apart, on hosts, zones or regions. */
  'deployment-has-host-podantiaffinity': (objects) => ofKind<IDeployment>(objects, 'Deployment').flatMap((deployment) => {
    if (deployment.spec?.replicas !== undefined && deployment.spec.replicas < 2) return []
    const labels = deployment.spec?.template.metadata?.labels ?? {}
    const anti = deployment.spec?.template.spec?.affinity?.podAntiAffinity
    const terms = [...(anti?.preferredDuringSchedulingIgnoredDuringExecution ?? []).map((preferred) => preferred.podAffinityTerm), ...anti?.requiredDuringSchedulingIgnoredDuringExecution ?? []]
    return terms.some((term) => ANTI_AFFINITY_KEYS.includes(term.topologyKey) && selects(term.labelSelector, labels))
      ? []
      : [{ object: name(deployment), message: 'Deployment does not have a host podAntiAffinity set' }]
  }),

  /** A Deployment that an HPA of its namespace scales sets no replicas (every apply would put them back). */
  'deployment-targeted-by-hpa-does-not-have-replicas-configured': (objects) => ofKind<IDeployment>(objects, 'Deployment').flatMap((deployment) => {
    const scaled = ofKind<IHorizontalPodAutoscaler>(objects, 'HorizontalPodAutoscaler').some((hpa) => namespaceOf(hpa) === namespaceOf(deployment) &&
      hpa.spec?.scaleTargetRef.kind.toLowerCase() === deployment.kind.toLowerCase() && hpa.spec.scaleTargetRef.name === deployment.metadata.name)
    return scaled && deployment.spec?.replicas !== undefined ? [{ object: name(deployment), message: 'The deployment is targeted by a HPA, but a static replica count is configured in the DeploymentSpec' }] : []
  }),

  /** A Deployment's selector selects its pod template's labels. */
  'deployment-pod-selector-labels-match-template-metadata-labels': (objects) => ofKind<IDeployment>(objects, 'Deployment')
    .filter((deployment) => !selects(deployment.spec?.selector, deployment.spec?.template.metadata?.labels ?? {}))
    .map((deployment) => ({ object: name(deployment), message: 'Deployment selector labels not matching template metadata labels' })),

  /** Every label value is one Kubernetes accepts. */
  'label-values': (objects) => objects.flatMap((object) => Object.entries(object.metadata.labels ?? {})
    .filter(([, value]) => !/^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/.test(value))
    .map(([key]) => ({ object: name(object), message: `Invalid label value of ${key}` }))),

  /** An HPA's target is an object of the build: apiVersion, kind, name, and the HPA's namespace. */
  'horizontalpodautoscaler-has-target': (objects) => ofKind<IHorizontalPodAutoscaler>(objects, 'HorizontalPodAutoscaler')
    .filter((hpa) => !objects.some((object) => object.apiVersion === hpa.spec?.scaleTargetRef.apiVersion && object.kind === hpa.spec.scaleTargetRef.kind &&
      object.metadata.name === hpa.spec.scaleTargetRef.name && namespaceOf(object) === namespaceOf(hpa)))
    .map((hpa) => ({ object: name(hpa), message: 'The HPA target does not match anything' })),

  /** An HPA keeps at least 2 replicas (minReplicas unset: 1). */
  'horizontalpodautoscaler-replicas': (objects) => ofKind<IHorizontalPodAutoscaler>(objects, 'HorizontalPodAutoscaler')
    .filter((hpa) => (hpa.spec?.minReplicas ?? 1) < 2)
    .map((hpa) => ({ object: name(hpa), message: 'HPA few replicas' })),

  /** Each topology spread constraint has a label selector, a maxSkew, a minDomains other than 0, a topology key, and a whenUnsatisfiable it knows. */
  'pod-topology-spread-constraints': perWorkload(({ pod }) => {
    for (const spread of pod.topologySpreadConstraints ?? []) {
      if (spread.labelSelector === undefined) return [{ message: 'No labelSelector detected' }]
      if (spread.maxSkew === 0) return [{ message: 'MaxSkew is set to zero' }]
      if (spread.minDomains === 0) return [{ message: 'MinDomains is set to zero' }]
      if (spread.topologyKey === '') return [{ message: 'TopologyKey is not set' }]
      if (spread.whenUnsatisfiable !== 'DoNotSchedule' && spread.whenUnsatisfiable !== 'ScheduleAnyway') return [{ message: 'Invalid WhenUnsatisfiable setting detected' }]
    }
    return []
  })
}

/** kube-score's default checks of kinds deploy/kubernetes/ has none of: each with those kinds. */
export const kubeScoreNotApplicable: Record<string, string[]> = {
  'cronjob-has-deadline': ['CronJob'],
  'cronjob-restartpolicy': ['CronJob'],
  'statefulset-has-poddisruptionbudget': ['StatefulSet'],
  'statefulset-has-host-podantiaffinity': ['StatefulSet'],
  'statefulset-has-servicename': ['StatefulSet'],
  'statefulset-pod-selector-labels-match-template-metadata-labels': ['StatefulSet']
}

/** The topology keys kube-score takes for "apart". */
const ANTI_AFFINITY_KEYS = ['kubernetes.io/hostname', 'topology.kubernetes.io/region', 'topology.kubernetes.io/zone', 'failure-domain.beta.kubernetes.io/region', 'failure-domain.beta.kubernetes.io/zone']

/** The API versions kube-score calls deprecated, each with its stable replacement. */
const DEPRECATED_APIS: Record<string, string> = {
  'extensions/v1beta1 Deployment': 'apps/v1',
  'extensions/v1beta1 DaemonSet': 'apps/v1',
  'extensions/v1beta1 Ingress': 'networking.k8s.io/v1',
  'extensions/v1beta1 IngressClass': 'networking.k8s.io/v1',
  'apps/v1beta1 Deployment': 'apps/v1',
  'apps/v1beta1 StatefulSet': 'apps/v1',
  'apps/v1beta2 Deployment': 'apps/v1',
  'apps/v1beta2 StatefulSet': 'apps/v1',
  'apps/v1beta2 DaemonSet': 'apps/v1',
  'batch/v1beta1 CronJob': 'batch/v1',
  'policy/v1beta1 PodDisruptionBudget': 'policy/v1',
  'networking.k8s.io/v1beta1 Ingress': 'networking.k8s.io/v1',
  'networking.k8s.io/v1beta1 IngressClass': 'networking.k8s.io/v1',
  'autoscaling/v2beta1 HorizontalPodAutoscaler': 'autoscaling/v2',
  'autoscaling/v2beta2 HorizontalPodAutoscaler': 'autoscaling/v2'
}

/** A port as Kubernetes's IntOrString.IntValue() reads it: a name is 0. */
const portValue = (port: number | string | undefined) => typeof port === 'number' ? port : Number.isInteger(Number(port)) ? Number(port) : 0

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

/** Every default check of each linter, as its documentation lists them: implemented above, or not applicable. */
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
