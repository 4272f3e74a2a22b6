// A subset of kustomize, for the few fields deploy/kubernetes/ uses (anything else is refused, not
// guessed), and the Kubernetes API's schemas of the kinds it holds: test/deploy/kubernetes.test.ts
// builds and checks the manifests offline with them (no cluster, kubectl or kustomize here).
import fs from 'node:fs'
import path from 'node:path'
import YAML from 'yaml'
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment'
import type { IContainer } from 'kubernetes-models/v1/Container'
import { validate as deploymentSchema } from 'kubernetes-models/_schemas/IoK8sApiAppsV1Deployment'
import { validate as hpaSchema } from 'kubernetes-models/_schemas/IoK8sApiAutoscalingV2HorizontalPodAutoscaler'
import { validate as ingressSchema } from 'kubernetes-models/_schemas/IoK8sApiNetworkingV1Ingress'
import { validate as networkPolicySchema } from 'kubernetes-models/_schemas/IoK8sApiNetworkingV1NetworkPolicy'
import { validate as pdbSchema } from 'kubernetes-models/_schemas/IoK8sApiPolicyV1PodDisruptionBudget'
import { validate as configMapSchema } from 'kubernetes-models/_schemas/IoK8sApiCoreV1ConfigMap'
import { validate as serviceSchema } from 'kubernetes-models/_schemas/IoK8sApiCoreV1Service'
import { projectRoot } from '../../lib/project-root.js'

export interface Manifest {
  apiVersion: string
  kind: string
  metadata: { name: string, namespace?: string, labels?: Record<string, string>, annotations?: Record<string, string> }
  [field: string]: unknown
}

export type Validate = ((data: unknown) => boolean) & { errors?: Array<{ instancePath: string, keyword: string, params: object }> | null }

/** The schema of each kind the manifests may hold (kubernetes-models: the API's OpenAPI, Kubernetes 1.34). */
export const schemas: Record<string, Validate> = {
  'apps/v1 Deployment': deploymentSchema,
  'autoscaling/v2 HorizontalPodAutoscaler': hpaSchema,
  'networking.k8s.io/v1 Ingress': ingressSchema,
  'networking.k8s.io/v1 NetworkPolicy': networkPolicySchema,
  'policy/v1 PodDisruptionBudget': pdbSchema,
  'v1 ConfigMap': configMapSchema,
  'v1 Service': serviceSchema
}

/** Every document of a YAML file; a syntax error or a repeated key throws, naming the file. */
export function readYaml (file: string): unknown[] {
  const documents = YAML.parseAllDocuments(fs.readFileSync(file, 'utf8'), { uniqueKeys: true, prettyErrors: false })
  const problems = [documents].flat().flatMap((document) => [...document.errors, ...document.warnings])
  if (problems.length > 0) throw new Error(`${path.relative(projectRoot, file)}: ${problems.map((problem) => problem.message).join('; ')}`)
  return [documents].flat().map((document) => document.toJS()).filter((value) => value !== null)
}

/**
 * The problems of an object against its kind's schema: the schema's own errors, and every field the
 * schema does not have. The schemas' validators allow unknown fields, as the API's OpenAPI does,
 * while the API server (kubectl's default strict field validation) refuses them: a misspelt
 * `readinesProbe` would otherwise pass, and the pod get no readiness probe. A field counts as known
 * when the validator reads it: it reads every property its schema names, and every key of a map.
 */
export function schemaProblems (object: Manifest): string[] {
  const schema = schemas[`${object.apiVersion} ${object.kind}`]
  if (schema === undefined) return [`${object.apiVersion} ${object.kind}: no schema here for this kind`]
  const read = new Set<string>()
  const watched = (value: unknown, at: string): unknown => {
    if (value === null || typeof value !== 'object') return value
    return new Proxy(value, {
      get (target, key, receiver) {
        const child = Reflect.get(target, key, receiver)
        if (typeof key !== 'string' || !Object.hasOwn(target, key)) return child
        if (!Array.isArray(target)) read.add(`${at}/${key}`)
        return watched(child, `${at}/${key}`)
      }
    })
  }
  const problems = schema(watched(object, '')) ? [] : (schema.errors ?? []).map(({ instancePath, keyword, params }) => `${instancePath || '/'}: ${keyword} ${JSON.stringify(params)}`)
  const unknown = (value: unknown, at: string): string[] => {
    if (value === null || typeof value !== 'object') return []
    if (Array.isArray(value)) return value.flatMap((item, i) => unknown(item, `${at}/${i}`))
    return Object.entries(value).flatMap(([key, child]) => read.has(`${at}/${key}`) ? unknown(child, `${at}/${key}`) : [`${at}/${key}: no such field`])
  }
  return [...problems, ...unknown(object, '')].map((problem) => `${object.kind} ${object.metadata?.name}: ${problem}`)
}

/** One RFC 6902 operation's path, as tokens. */
export function pointer (text: string): string[] {
  if (!text.startsWith('/')) throw new Error(`patch path ${text}: not a JSON pointer`)
  return text.slice(1).split('/').map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'))
}

/** Applies RFC 6902 operations (add, replace, remove: what the overlays use) to `object` in place. */
export function applyJsonPatch (object: unknown, operations: unknown): void {
  if (!Array.isArray(operations)) throw new Error('a patch that is not a list of RFC 6902 operations (a strategic merge patch?) is not built here')
  for (const { op, path: where, value } of operations as Array<{ op: string, path: string, value?: unknown }>) {
    if (op !== 'add' && op !== 'replace' && op !== 'remove') throw new Error(`patch op ${op}: not built here`)
    const tokens = pointer(where)
    const last = tokens.pop()!
    let parent = object as Record<string, unknown>
    for (const token of tokens) {
      if (parent[token] === null || typeof parent[token] !== 'object') throw new Error(`patch ${op} ${where}: ${token} does not exist`)
      parent = parent[token] as Record<string, unknown>
    }
    const exists = Object.hasOwn(parent, last)
    if (Array.isArray(parent)) {
      const index = last === '-' ? parent.length : Number(last)
      if (!(index >= 0 && index <= parent.length) || (op !== 'add' && index >= parent.length)) throw new Error(`patch ${op} ${where}: no such index`)
      if (op === 'add') parent.splice(index, 0, value)
      else if (op === 'replace') parent[index] = value
      else parent.splice(index, 1)
    } else if (op !== 'add' && !exists) {
      throw new Error(`patch ${op} ${where}: ${last} does not exist`)
    } else if (op === 'remove') {
      delete parent[last]
    } else {
      parent[last] = value
    }
  }
}

/** `name[:tag][@digest]` apart. */
export function imageParts (image: string): { name: string, tag?: string, digest?: string } {
  const [reference = '', digest] = image.split('@')
  const colon = reference.lastIndexOf(':')
  return colon > reference.lastIndexOf('/') ? { name: reference.slice(0, colon), tag: reference.slice(colon + 1), digest } : { name: reference, digest }
}

/** The fields of a kustomization this test builds; kustomize has more, which are refused here. */
export const KUSTOMIZATION_FIELDS = ['apiVersion', 'kind', 'resources', 'namespace', 'images', 'patches']

export interface Kustomization {
  apiVersion: string
  kind: string
  resources?: string[]
  namespace?: string
  images?: Array<{ name: string, newName?: string, newTag?: string, digest?: string }>
  patches?: Array<{ target: { kind: string, name: string }, patch?: string, path?: string }>
}

/** What `kustomize build dir` gives, for the fields above; the files it read beside each kustomization. */
export function kustomize (dir: string, listed: Map<string, Set<string>> = new Map()): Manifest[] {
  const file = path.join(dir, 'kustomization.yaml')
  const [kustomization] = readYaml(file) as [Kustomization]
  const name = path.relative(projectRoot, file)
  if (kustomization.apiVersion !== 'kustomize.config.k8s.io/v1beta1' || kustomization.kind !== 'Kustomization') throw new Error(`${name}: not a Kustomization`)
  const unbuilt = Object.keys(kustomization).filter((field) => !KUSTOMIZATION_FIELDS.includes(field))
  if (unbuilt.length > 0) throw new Error(`${name}: ${unbuilt.join(', ')}: not built by this test; build it here first`)
  const files = new Set<string>()
  listed.set(dir, files)
  const objects: Manifest[] = []
  for (const resource of kustomization.resources ?? []) {
    const target = path.resolve(dir, resource)
    if (!fs.existsSync(target)) throw new Error(`${name}: resource ${resource} does not exist`)
    files.add(target)
    objects.push(...(fs.statSync(target).isDirectory() ? kustomize(target, listed) : readYaml(target) as Manifest[]))
  }
  for (const { target, patch, path: patchFile, ...rest } of kustomization.patches ?? []) {
    if (Object.keys(rest).length > 0 || Object.keys(target).some((field) => field !== 'kind' && field !== 'name')) throw new Error(`${name}: a patch's fields beyond target kind and name, patch and path are not built here`)
    if (patchFile !== undefined) files.add(path.resolve(dir, patchFile))
    const operations = patchFile === undefined ? YAML.parse(patch ?? '') : readYaml(path.resolve(dir, patchFile))[0]
    const matched = objects.filter((object) => object.kind === target.kind && object.metadata.name === target.name)
    if (matched.length === 0) throw new Error(`${name}: the patch of ${target.kind} ${target.name} matches nothing`)
    for (const object of matched) applyJsonPatch(object, operations)
  }
  for (const object of objects) {
    if (kustomization.namespace !== undefined) object.metadata.namespace = kustomization.namespace
    for (const container of podContainers(object)) {
      const { name: image, tag, digest } = imageParts(container.image ?? '')
      const rule = kustomization.images?.find((rule) => rule.name === image)
      if (rule === undefined) continue
      const newDigest = rule.digest ?? (rule.newTag === undefined ? digest : undefined)
      const newTag = rule.digest === undefined ? rule.newTag ?? tag : undefined
      container.image = `${rule.newName ?? image}${newTag === undefined ? '' : `:${newTag}`}${newDigest === undefined ? '' : `@${newDigest}`}`
    }
  }
  return objects
}

/** The containers and init containers of an object's pod template (none for other kinds). */
export function podContainers (object: Manifest): IContainer[] {
  const pod = (object as unknown as IDeployment).spec?.template?.spec
  return [...pod?.initContainers ?? [], ...pod?.containers ?? []]
}
