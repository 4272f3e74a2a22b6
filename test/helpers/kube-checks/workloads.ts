// What kube-score's and kube-linter's checks both read of a build: the objects by kind, the
// workloads' pod templates and containers, and label selectors as Kubernetes reads them.
import type { IContainer } from 'kubernetes-models/v1/Container'
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec'
import type { IPodTemplateSpec } from 'kubernetes-models/v1/PodTemplateSpec'
import type { Manifest } from '../kustomize.js'

/** What a check found: in which object (and container), and the linter's words for it. */
export interface Finding {
  object: string
  container?: string
  message: string
}

/** A check: every object of a build in, what it finds out. */
export type Check = (objects: Manifest[]) => Finding[]

export interface Selector { matchLabels?: Record<string, string>, matchExpressions?: Array<{ key: string, operator: string, values?: string[] }> }

export const name = (object: Manifest) => `${object.kind}/${object.metadata.name}`
export const namespaceOf = (object: Manifest) => object.metadata.namespace ?? ''
export const ofKind = <T>(objects: Manifest[], kind: string) => objects.filter((object) => object.kind === kind) as unknown as Array<T & Manifest>

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
export function workloads (objects: Manifest[]) {
  return objects.flatMap((object) => {
    const template = podTemplate(object)
    return template?.spec === undefined ? [] : [{ object, pod: template.spec, labels: template.metadata?.labels ?? {} }]
  })
}

export const allContainers = (pod: IPodSpec): IContainer[] => [...pod.initContainers ?? [], ...pod.containers]

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
export const mapSelects = (map: Record<string, string> | undefined, labels: Record<string, string>) => selects({ matchLabels: map ?? {} }, labels)
