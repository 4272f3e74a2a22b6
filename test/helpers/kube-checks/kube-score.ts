// kube-score's default checks, written from its source (zegl/kube-score, score/: README_CHECKS.md
// lists the checks and which are on by default). kube-score grades a check; any grade but "all OK"
// is a finding here (its warnings too).
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment'
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler'
import type { IIngress } from 'kubernetes-models/networking.k8s.io/v1/Ingress'
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy'
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget'
import type { IProbe } from 'kubernetes-models/v1/Probe'
import type { IService } from 'kubernetes-models/v1/Service'
import type { Manifest } from '../kustomize.js'
import { quantity } from '../quantity.js'
import { allContainers, mapSelects, name, namespaceOf, ofKind, selects, workloads, type Check, type Finding } from './workloads.js'

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
