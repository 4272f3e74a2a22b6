// A subset of kustomize, for the few fields deploy/kubernetes/ uses (anything else is refused, not
// guessed), and the Kubernetes API's schemas of the kinds it holds: test/system/deploy/kubernetes.test.ts
// builds and checks the manifests offline with them (no cluster, kubectl or kustomize here).
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import YAML from 'yaml'
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment'
import type { IConfigMap } from 'kubernetes-models/v1/ConfigMap'
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
export const KUSTOMIZATION_FIELDS = ['apiVersion', 'kind', 'resources', 'namespace', 'configMapGenerator', 'images', 'patches']

/** A configMapGenerator entry, for the fields built here. */
export interface ConfigMapGenerator {
  name: string
  behavior?: 'create' | 'merge' | 'replace'
  literals?: string[]
  envs?: string[]
  options?: { labels?: Record<string, string> }
}

export interface Kustomization {
  apiVersion: string
  kind: string
  resources?: string[]
  namespace?: string
  configMapGenerator?: ConfigMapGenerator[]
  images?: Array<{ name: string, newName?: string, newTag?: string, digest?: string }>
  patches?: Array<{ target: { kind: string, name: string }, patch?: string, path?: string }>
}

/**
 * What `kustomize build dir` gives, for the fields above; the files it read beside each
 * kustomization. As kustomize, the generated ConfigMaps get their content hash in their name once
 * the whole build is done (overlays' patches and merges included), and the references to them are
 * renamed with them.
 */
export function kustomize (dir: string, listed: Map<string, Set<string>> = new Map()): Manifest[] {
  const objects = accumulate(dir, listed)
  const renamed = new Map<string, string>()
  for (const object of objects) {
    if (!hashed.has(object)) continue
    const name = `${object.metadata.name}-${configMapHash(object)}`
    renamed.set(`${object.metadata.namespace ?? ''}/${object.metadata.name}`, name)
    object.metadata.name = name
  }
  for (const object of objects) {
    for (const reference of configMapReferences(object)) {
      reference.name = renamed.get(`${object.metadata.namespace ?? ''}/${reference.name}`) ?? reference.name
    }
  }
  return objects
}

/** The generated objects whose name gets their content hash at the end of the build. */
const hashed = new WeakSet<Manifest>()

/** One kustomization's objects: its resources, its generators', then its patches, namespace and images applied. */
function accumulate (dir: string, listed: Map<string, Set<string>>): Manifest[] {
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
    objects.push(...(fs.statSync(target).isDirectory() ? accumulate(target, listed) : readYaml(target) as Manifest[]))
  }
  for (const generator of kustomization.configMapGenerator ?? []) {
    for (const envFile of generator.envs ?? []) files.add(path.resolve(dir, envFile))
    absorb(objects, generateConfigMap(dir, generator), generator.behavior ?? 'create', `${name}: configMapGenerator ${generator.name}`)
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

/**
 * The variables a container starts with, as the kubelet gives them: the keys of the ConfigMaps of
 * its envFrom, then its own env, each Secret's key read as `secrets` has it (empty if missing);
 * and the Secret keys it reads.
 */
export function containerEnvironment (container: IContainer, configMaps: readonly IConfigMap[], secrets: Readonly<Record<string, string>>) {
  const env: Record<string, string> = {}
  const secretKeys: Array<{ name: string, key: string }> = []
  for (const from of container.envFrom ?? []) Object.assign(env, configMaps.find((configMap) => configMap.metadata?.name === from.configMapRef?.name)?.data)
  for (const { name, value, valueFrom } of container.env ?? []) {
    const secret = valueFrom?.secretKeyRef
    if (secret !== undefined) secretKeys.push({ name: secret.name!, key: secret.key })
    env[name] = value ?? secrets[secret?.key ?? ''] ?? ''
  }
  return { env, secretKeys }
}

/** The fields of a configMapGenerator entry built here, and of its options. */
const GENERATOR_FIELDS = ['name', 'behavior', 'literals', 'envs', 'options']
const GENERATOR_OPTIONS = ['labels']

/** A ConfigMap key (the API's rule), and an environment variable's name as kustomize checks an env file's keys. */
const CONFIG_MAP_KEY = /^[-._a-zA-Z0-9]+$/
const ENV_VAR_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/

/**
 * The ConfigMap a configMapGenerator entry makes, as kustomize makes it (api/kv, api/internal/generators):
 * the env files' pairs first, then the literals'. An env file's line is `KEY=value` (the value as
 * it is, to the line's end), or `KEY` for an empty value; blank lines and lines starting with `#`
 * (after leading spaces) are skipped. A literal is `KEY=value`, the value unquoted when wholly in
 * single or double quotes. A key given twice is refused.
 */
export function generateConfigMap (dir: string, generator: ConfigMapGenerator): Manifest {
  const unbuilt = [...Object.keys(generator).filter((field) => !GENERATOR_FIELDS.includes(field)),
    ...Object.keys(generator.options ?? {}).filter((field) => !GENERATOR_OPTIONS.includes(field)).map((field) => `options.${field}`)]
  if (unbuilt.length > 0) throw new Error(`configMapGenerator ${generator.name}: ${unbuilt.join(', ')}: not built by this test; build it here first`)
  if (!generator.name) throw new Error('a configMapGenerator entry without a name')
  const pairs: Array<[string, string]> = []
  for (const envFile of generator.envs ?? []) {
    const bytes = fs.readFileSync(path.resolve(dir, envFile))
    const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes).replace(/^\uFEFF/, '')
    for (const raw of text.split(/\r?\n/)) {
      const line = raw.trimStart()
      if (line === '' || line.startsWith('#')) continue
      const at = line.indexOf('=')
      const key = at === -1 ? line : line.slice(0, at)
      if (!ENV_VAR_NAME.test(key)) throw new Error(`${envFile}: ${JSON.stringify(key)} is not an environment variable's name`)
      pairs.push([key, at === -1 ? '' : line.slice(at + 1)])
    }
  }
  for (const literal of generator.literals ?? []) {
    const at = literal.indexOf('=')
    if (at <= 0) throw new Error(`invalid literal source ${literal}, expected key=value`)
    const value = literal.slice(at + 1)
    const quoted = value.length >= 2 && value[0] === value.at(-1) && (value[0] === '"' || value[0] === "'")
    pairs.push([literal.slice(0, at), quoted ? value.slice(1, -1) : value])
  }
  const data: Record<string, string> = {}
  for (const [key, value] of pairs) {
    if (!CONFIG_MAP_KEY.test(key)) throw new Error(`configMapGenerator ${generator.name}: ${JSON.stringify(key)} is not a ConfigMap key`)
    if (Object.hasOwn(data, key)) throw new Error(`configmap ${generator.name} illegally repeats the key \`${key}\``)
    data[key] = value
  }
  const labels = generator.options?.labels
  const configMap: Manifest = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: generator.name, ...(labels === undefined ? {} : { labels: { ...labels } }) }, data }
  hashed.add(configMap)
  return configMap
}

/**
 * Adds a generated object to a kustomization's objects, as kustomize's accumulator does: `create`
 * a new one (a name already there is refused); `merge` into the one of that name, its data and
 * labels over the old ones; `replace` it. A merged or replaced object keeps its name suffix only
 * if both had one (a plain ConfigMap merged into stays plain).
 */
function absorb (objects: Manifest[], generated: Manifest, behavior: string, where: string): void {
  const index = objects.findIndex((object) => object.kind === generated.kind && object.metadata.name === generated.metadata.name && object.metadata.namespace === generated.metadata.namespace)
  if (behavior === 'create') {
    if (index !== -1) throw new Error(`${where}: exists already; behavior must be merge or replace`)
    objects.push(generated)
    return
  }
  if (behavior !== 'merge' && behavior !== 'replace') throw new Error(`${where}: behavior ${behavior} is not kustomize's`)
  if (index === -1) throw new Error(`${where}: does not exist; cannot merge or replace`)
  const old = objects[index]!
  const labels = { ...old.metadata.labels, ...generated.metadata.labels }
  generated.metadata = { ...generated.metadata, ...(Object.keys(labels).length > 0 ? { labels } : {}) }
  if (behavior === 'merge') generated.data = { ...old.data as Record<string, string>, ...generated.data as Record<string, string> }
  if (!hashed.has(old)) hashed.delete(generated)
  objects[index] = generated
}

/**
 * The suffix kustomize gives a generated ConfigMap (api/hasher): the SHA-256 of
 * `{"data":…,"kind":"ConfigMap","name":""}` (and `binaryData` when it has some) as Go's
 * json.Marshal writes it, of which the first 10 hex digits, with 0, 1, 3, a and e turned into
 * g, h, k, m and t (so that no word is spelt). The name is always empty: kustomize looks it up as
 * one field called `metadata/name`, which no object has (its own tests' names, bob-79t79mt227 for
 * one, are the hashes of an empty name); the namespace does not count either. Only the data does.
 */
export function configMapHash (configMap: Manifest): string {
  const encoded: Record<string, unknown> = { kind: 'ConfigMap', name: '', data: configMap.data ?? '' }
  if (configMap.binaryData !== null && typeof configMap.binaryData === 'object') encoded.binaryData = configMap.binaryData
  const hex = createHash('sha256').update(goJson(encoded)).digest('hex')
  return hex.slice(0, 10).replace(/[013ae]/g, (digit) => ({ 0: 'g', 1: 'h', 3: 'k', a: 'm', e: 't' })[digit]!)
}

/**
 * JSON as Go's json.Marshal writes it, for what a ConfigMap holds: a map's keys sorted (by their
 * UTF-8 bytes), `<`, `>`, `&`, U+2028 and U+2029 escaped as \u00XX (its HTML escaping), the rest
 * as JSON.stringify writes it (Go 1.22 and later: \b and \f included). Numbers are integers here.
 */
export function goJson (value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`)
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value)
  if (typeof value === 'boolean' || value === null) return String(value)
  if (Array.isArray(value)) return `[${value.map(goJson).join(',')}]`
  if (typeof value === 'object') {
    const keys = Object.keys(value).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
    return `{${keys.map((key) => `${goJson(key)}:${goJson((value as Record<string, unknown>)[key])}`).join(',')}}`
  }
  throw new Error(`${String(value)}: not encoded here`)
}

/**
 * The references to ConfigMaps by name in an object's pod template, which kustomize renames with
 * the ConfigMap (its name-reference rules for pods): envFrom, env's configMapKeyRef, and volumes.
 */
export function configMapReferences (object: Manifest): Array<{ name?: string }> {
  const pod = (object as unknown as IDeployment).spec?.template?.spec
  const references: Array<{ name?: string } | undefined> = []
  for (const container of podContainers(object)) {
    for (const from of container.envFrom ?? []) references.push(from.configMapRef)
    for (const variable of container.env ?? []) references.push(variable.valueFrom?.configMapKeyRef)
  }
  for (const volume of pod?.volumes ?? []) {
    references.push(volume.configMap)
    for (const source of volume.projected?.sources ?? []) references.push(source.configMap)
  }
  return references.filter((reference) => reference?.name !== undefined) as Array<{ name?: string }>
}
