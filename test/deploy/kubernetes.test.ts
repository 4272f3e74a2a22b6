import fs from 'node:fs'
import path from 'node:path'
import t, { type Test } from 'tap'
import YAML from 'yaml'
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment'
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler'
import type { IIngress } from 'kubernetes-models/networking.k8s.io/v1/Ingress'
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy'
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget'
import type { IConfigMap } from 'kubernetes-models/v1/ConfigMap'
import type { IContainer } from 'kubernetes-models/v1/Container'
import type { IProbe } from 'kubernetes-models/v1/Probe'
import type { IService } from 'kubernetes-models/v1/Service'
import { validate as deploymentSchema } from 'kubernetes-models/_schemas/IoK8sApiAppsV1Deployment'
import { validate as hpaSchema } from 'kubernetes-models/_schemas/IoK8sApiAutoscalingV2HorizontalPodAutoscaler'
import { validate as ingressSchema } from 'kubernetes-models/_schemas/IoK8sApiNetworkingV1Ingress'
import { validate as networkPolicySchema } from 'kubernetes-models/_schemas/IoK8sApiNetworkingV1NetworkPolicy'
import { validate as pdbSchema } from 'kubernetes-models/_schemas/IoK8sApiPolicyV1PodDisruptionBudget'
import { validate as configMapSchema } from 'kubernetes-models/_schemas/IoK8sApiCoreV1ConfigMap'
import { validate as serviceSchema } from 'kubernetes-models/_schemas/IoK8sApiCoreV1Service'
import { loadConfig } from '../../lib/config/load.js'
import type { Config } from '../../lib/config/schema.js'
import { unknownSettings } from '../../lib/config/unknown-settings.js'
import { projectRoot } from '../../lib/project-root.js'
import { build, json } from '../helpers/index.js'

// deploy/kubernetes/, checked offline (no cluster, kubectl or kustomize here): each kustomization
// built as kustomize builds it, for the few fields it uses (anything else is refused, not guessed),
// every object validated against the Kubernetes API's schemas, then what the manifests promise
// about the service: probes, timings, the image's user, settings, selectors.

const root = path.join(projectRoot, 'deploy', 'kubernetes')
const readme = fs.readFileSync(path.join(projectRoot, 'deploy', 'README.md'), 'utf8')
const dockerfile = fs.readFileSync(path.join(projectRoot, 'Dockerfile'), 'utf8')

interface Manifest {
  apiVersion: string
  kind: string
  metadata: { name: string, namespace?: string, labels?: Record<string, string>, annotations?: Record<string, string> }
  [field: string]: unknown
}

type Validate = ((data: unknown) => boolean) & { errors?: Array<{ instancePath: string, keyword: string, params: object }> | null }

/** The schema of each kind the manifests may hold (kubernetes-models: the API's OpenAPI, Kubernetes 1.34). */
const schemas: Record<string, Validate> = {
  'apps/v1 Deployment': deploymentSchema,
  'autoscaling/v2 HorizontalPodAutoscaler': hpaSchema,
  'networking.k8s.io/v1 Ingress': ingressSchema,
  'networking.k8s.io/v1 NetworkPolicy': networkPolicySchema,
  'policy/v1 PodDisruptionBudget': pdbSchema,
  'v1 ConfigMap': configMapSchema,
  'v1 Service': serviceSchema
}

/** Every document of a YAML file; a syntax error or a repeated key throws, naming the file. */
function readYaml (file: string): unknown[] {
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
function schemaProblems (object: Manifest): string[] {
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
function pointer (text: string): string[] {
  if (!text.startsWith('/')) throw new Error(`patch path ${text}: not a JSON pointer`)
  return text.slice(1).split('/').map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'))
}

/** Applies RFC 6902 operations (add, replace, remove: what the overlays use) to `object` in place. */
function applyJsonPatch (object: unknown, operations: unknown): void {
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
function imageParts (image: string): { name: string, tag?: string, digest?: string } {
  const [reference = '', digest] = image.split('@')
  const colon = reference.lastIndexOf(':')
  return colon > reference.lastIndexOf('/') ? { name: reference.slice(0, colon), tag: reference.slice(colon + 1), digest } : { name: reference, digest }
}

/** The fields of a kustomization this test builds; kustomize has more, which are refused here. */
const KUSTOMIZATION_FIELDS = ['apiVersion', 'kind', 'resources', 'namespace', 'images', 'patches']

interface Kustomization {
  apiVersion: string
  kind: string
  resources?: string[]
  namespace?: string
  images?: Array<{ name: string, newName?: string, newTag?: string, digest?: string }>
  patches?: Array<{ target: { kind: string, name: string }, patch?: string, path?: string }>
}

/** What `kustomize build dir` gives, for the fields above; the files it read beside each kustomization. */
function kustomize (dir: string, listed: Map<string, Set<string>> = new Map()): Manifest[] {
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
function podContainers (object: Manifest): IContainer[] {
  const pod = (object as unknown as IDeployment).spec?.template?.spec
  return [...pod?.initContainers ?? [], ...pod?.containers ?? []]
}

/** Every folder of deploy/kubernetes/ built: the base and each overlay. */
const folders = ['base', ...fs.readdirSync(path.join(root, 'overlays')).map((overlay) => path.join('overlays', overlay))]
const listed = new Map<string, Set<string>>()
const renders = folders.map((folder) => ({ folder, objects: kustomize(path.join(root, folder), listed) }))

t.test('every file of deploy/kubernetes is a kustomization, or listed by one, and every listed one exists', async (t) => {
  const all = fs.readdirSync(root, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name))
  const kustomizations = folders.map((folder) => path.join(root, folder, 'kustomization.yaml'))
  const used = new Set([...listed.values()].flatMap((files) => [...files]))
  t.same(all.filter((file) => !kustomizations.includes(file) && !used.has(file)).map((file) => path.relative(root, file)), [], 'no file left out')
  t.ok(kustomizations.every((file) => fs.existsSync(file)), 'base and each overlay have a kustomization.yaml')
  t.ok(listed.get(path.join(root, 'base'))!.size >= 5, 'the base lists its resources')
})

t.test('every object of the base and of each overlay is valid against the Kubernetes API\'s schema', async (t) => {
  for (const { folder, objects } of renders) {
    t.same(objects.flatMap(schemaProblems), [], `${folder}: ${objects.map((object) => object.kind).join(', ')}`)
  }
})

t.test('the schema check refuses a misspelt field, a wrong type, a missing field and an unknown kind', async (t) => {
  const deployment = structuredClone(renders[0]!.objects.find((object) => object.kind === 'Deployment')!)
  const api = (deployment as unknown as IDeployment).spec!.template.spec!.containers[0]! as unknown as Record<string, unknown>
  api.readinesProbe = api.readinessProbe
  delete api.readinessProbe
  ;(api.livenessProbe as IProbe).periodSeconds = '10' as unknown as number
  delete api.name
  const problems = schemaProblems(deployment)
  t.ok(problems.some((problem) => problem.includes('/spec/template/spec/containers/0/readinesProbe: no such field')), 'the misspelt field')
  t.ok(problems.some((problem) => problem.includes('/spec/template/spec/containers/0/livenessProbe/periodSeconds: type')), 'the string for a number')
  t.ok(problems.some((problem) => problem.includes('required {"missingProperty":"name"}')), 'the container without a name')
  t.match(schemaProblems({ ...deployment, kind: 'Deploymnet' }), [/no schema here/])
})

t.test('the kustomize subset refuses what it does not build, rather than guessing', async (t) => {
  t.throws(() => applyJsonPatch({ spec: {} }, [{ op: 'replace', path: '/spec/minReplicas', value: 3 }]), /minReplicas does not exist/)
  t.throws(() => applyJsonPatch({ spec: {} }, { spec: { minReplicas: 3 } }), /strategic merge/)
  t.throws(() => applyJsonPatch({ spec: {} }, [{ op: 'move', from: '/spec', path: '/x' }]), /not built here/)
  const object = { a: [1, 2], b: { c: 1 } }
  applyJsonPatch(object, [{ op: 'add', path: '/a/-', value: 3 }, { op: 'remove', path: '/b/c' }, { op: 'add', path: '/b/d~1e', value: 4 }])
  t.same(object, { a: [1, 2, 3], b: { 'd/e': 4 } })
  t.same(imageParts('registry.example.com:5000/api:1.0@sha256:ab'), { name: 'registry.example.com:5000/api', tag: '1.0', digest: 'sha256:ab' })
  t.same(imageParts('registry.example.com:5000/api'), { name: 'registry.example.com:5000/api', digest: undefined })
})

/** The objects of one build, by kind; exactly one of each that the service needs. */
function parts (t: Test, objects: Manifest[]) {
  const one = <T>(kind: string): T => {
    const found = objects.filter((object) => object.kind === kind)
    t.equal(found.length, 1, `one ${kind}`)
    return found[0] as unknown as T
  }
  const deployment = one<IDeployment>('Deployment')
  const pod = deployment.spec!.template.spec!
  const api = pod.containers.find((container) => container.name === 'api')!
  t.equal(pod.containers.length, 1, 'one container, the API')
  t.equal(pod.initContainers?.length, 1, 'one init container')
  return {
    deployment,
    pod,
    api,
    migrate: pod.initContainers![0]!,
    labels: deployment.spec!.template.metadata!.labels!,
    configMaps: objects.filter((object) => object.kind === 'ConfigMap') as unknown as IConfigMap[],
    service: one<IService>('Service'),
    pdb: one<IPodDisruptionBudget>('PodDisruptionBudget'),
    hpa: one<IHorizontalPodAutoscaler>('HorizontalPodAutoscaler'),
    networkPolicies: objects.filter((object) => object.kind === 'NetworkPolicy') as unknown as INetworkPolicy[],
    ingresses: objects.filter((object) => object.kind === 'Ingress') as unknown as IIngress[]
  }
}

/** A stand-in for each credential the Secret holds, as the service checks it. */
const PLACEHOLDERS: Record<string, string> = {
  DATABASE_URL: 'postgres://servant_app:secret@db:5432/servant',
  DATABASE_MIGRATION_URL: 'postgres://servant_migrator:secret@db:5432/servant',
  BASIC_AUTH_USERS: 'alice:wonderland',
  API_TOKENS: 'token'
}

/** The variables a container starts with: its ConfigMaps' keys, then its own env; and the Secret keys it reads. */
function environment (t: Test, container: IContainer, configMaps: IConfigMap[]) {
  const env: Record<string, string> = {}
  const secretKeys: Array<{ name: string, key: string }> = []
  for (const from of container.envFrom ?? []) {
    // A whole Secret would hand the container keys nobody listed (DATABASE_MIGRATION_URL).
    t.ok(from.configMapRef !== undefined && from.secretRef === undefined && from.prefix === undefined, `${container.name}: envFrom takes ConfigMaps only, unprefixed`)
    const configMap = configMaps.find((configMap) => configMap.metadata?.name === from.configMapRef?.name)
    t.ok(configMap, `${container.name}: ConfigMap ${from.configMapRef?.name} is in the build`)
    Object.assign(env, configMap?.data)
  }
  for (const { name, value, valueFrom } of container.env ?? []) {
    const secret = valueFrom?.secretKeyRef
    if (secret !== undefined) secretKeys.push({ name: secret.name!, key: secret.key })
    t.ok(value !== undefined || secret !== undefined, `${container.name}: ${name} is a value or a Secret's key`)
    env[name] = value ?? PLACEHOLDERS[secret?.key ?? ''] ?? ''
  }
  return { env, secretKeys }
}

/** Seconds the kubelet waits between probes, and failures before it acts: the API's defaults when unset. */
function probeTimes (probe: IProbe | undefined) {
  return { period: probe?.periodSeconds ?? 10, timeout: probe?.timeoutSeconds ?? 1, failures: probe?.failureThreshold ?? 3 }
}

/** The port a probe or Service names, as the container declares it. */
function containerPort (container: IContainer, port: number | string | undefined) {
  return container.ports?.find((declared) => declared.name === port || declared.containerPort === port)
}

const subset = (labels: Record<string, string> | undefined, of: Record<string, string>) =>
  labels !== undefined && Object.keys(labels).length > 0 && Object.entries(labels).every(([key, value]) => of[key] === value)

/** The app as the base's ConfigMap configures it, on the memory store, for the probes' requests. */
async function probedApp (t: Test) {
  const configMap = renders[0]!.objects.find((object) => object.kind === 'ConfigMap') as unknown as IConfigMap
  // The metrics listener on a free port, as every test's (METRICS_PORT: 0 from build()).
  const { METRICS_PORT: _port, ...data } = configMap.data!
  return build(t, { ...data, STORE: 'memory' })
}

for (const { folder, objects } of renders) {
  t.test(`${folder}: the probes are the service's routes, on its port`, async (t) => {
    const { api, configMaps, service, labels, ingresses } = parts(t, objects)
    const config = loadConfig(environment(t, api, configMaps).env)
    const http = containerPort(api, 'http')
    t.equal(http?.containerPort, config.PORT, 'the port named http is the PORT the service listens on')
    t.equal(api.startupProbe?.httpGet?.port, 'http', 'startup probe on http')
    t.equal(api.readinessProbe?.httpGet?.port, 'http', 'readiness probe on http')
    t.equal(api.livenessProbe?.httpGet?.port, 'http', 'liveness probe on http')
    // The app answers each path with its route: readiness is /ready's ("ready"), liveness /health's ("ok").
    const app = await probedApp(t)
    for (const [probe, status] of [[api.readinessProbe, 'ready'], [api.livenessProbe, 'ok'], [api.startupProbe, 'ok']] as const) {
      const res = await app.inject({ url: probe?.httpGet?.path })
      t.equal(res.statusCode, 200, `${probe?.httpGet?.path} answers`)
      t.same(json(res), { status }, `${probe?.httpGet?.path} is the route answering "${status}"`)
    }
    t.equal(service.spec?.type, 'ClusterIP')
    t.same(service.spec?.ports?.map(({ port, targetPort }) => [port, targetPort]), [[80, 'http']], 'the Service: port 80 to the named port http')
    t.ok(subset(service.spec?.selector, labels), 'the Service selects the pods')
    for (const ingress of ingresses) {
      const backends = ingress.spec?.rules?.flatMap((rule) => rule.http?.paths.map((route) => route.backend.service) ?? []) ?? []
      t.ok(backends.length > 0 && backends.every((backend) => backend?.name === service.metadata?.name && backend?.port?.name === 'http'),
        `Ingress ${ingress.metadata?.name} sends to the Service's port http`)
    }
  })

  t.test(`${folder}: shutdown and probe timings fit together`, async (t) => {
    const { api, pod, configMaps } = parts(t, objects)
    const config: Config = loadConfig(environment(t, api, configMaps).env)
    const preStop = api.lifecycle?.preStop
    const pause = preStop?.sleep?.seconds ?? (preStop?.exec?.command?.[0] === 'sleep' ? Number(preStop.exec.command[1]) : 0)
    t.ok(pause > 0, `a preStop pause (${pause} s) before SIGTERM`)
    // The kubelet's grace period counts from the preStop hook: the pause, then the service's own
    // bound on its close after SIGTERM, must both end before it sends SIGKILL.
    const grace = pod.terminationGracePeriodSeconds ?? 30
    t.ok(pause + config.SHUTDOWN_GRACE / 1000 < grace, `pause ${pause} s + SHUTDOWN_GRACE ${config.SHUTDOWN_GRACE / 1000} s < terminationGracePeriodSeconds ${grace} s`)
    t.ok(config.SHUTDOWN_DRAIN < config.SHUTDOWN_GRACE, `SHUTDOWN_DRAIN ${config.SHUTDOWN_DRAIN} ms < SHUTDOWN_GRACE ${config.SHUTDOWN_GRACE} ms`)
    // A deleted pod leaves the endpoints at once and the pause covers their propagation. A pod
    // whose /ready fails without being deleted (database gone, overload, a restart after a failed
    // liveness probe) is taken out by its readiness probe: the next probe within one period, the
    // last failure (failureThreshold - 1) periods later, within its timeout. That must not take
    // longer than the pause, so that either way traffic stops within the same bound.
    const readiness = probeTimes(api.readinessProbe)
    const detected = readiness.period * readiness.failures + readiness.timeout
    t.ok(detected <= pause, `readiness: ${readiness.period} s × ${readiness.failures} + ${readiness.timeout} s = ${detected} s ≤ pause ${pause} s`)
    // The service retries an unreachable database for DATABASE_STARTUP_TIMEOUT, then exits 1 with
    // the reason: the startup probe must not kill it before.
    const startup = probeTimes(api.startupProbe)
    t.ok(startup.period * startup.failures > config.DATABASE_STARTUP_TIMEOUT / 1000, `startup: ${startup.period} s × ${startup.failures} > DATABASE_STARTUP_TIMEOUT ${config.DATABASE_STARTUP_TIMEOUT / 1000} s`)
  })

  t.test(`${folder}: the pods run as the image's user, without privileges, on a read-only filesystem`, async (t) => {
    const { pod } = parts(t, objects)
    const lines = dockerfile.split('\n')
    const user = lines.slice(lines.findLastIndex((line) => line.startsWith('FROM '))).findLast((line) => line.startsWith('USER '))
    const [uid, gid] = (/^USER (\d+):(\d+)$/.exec(user ?? '') ?? []).slice(1).map(Number)
    t.ok(uid !== undefined && uid > 0, `the image's user is numeric and not root (${user})`)
    t.equal(pod.securityContext?.runAsNonRoot, true, 'runAsNonRoot')
    t.equal(pod.securityContext?.seccompProfile?.type, 'RuntimeDefault', 'seccomp RuntimeDefault')
    t.equal(pod.automountServiceAccountToken, false, 'no service account token')
    // Service links would set <SERVICE>_PORT variables: one named metrics would set METRICS_PORT.
    t.equal(pod.enableServiceLinks, false, 'no service links in the environment')
    for (const container of [...pod.initContainers ?? [], ...pod.containers]) {
      const security = container.securityContext
      t.equal(security?.runAsUser ?? pod.securityContext?.runAsUser, uid, `${container.name}: runAsUser is the image's`)
      t.equal(security?.runAsGroup ?? pod.securityContext?.runAsGroup, gid, `${container.name}: runAsGroup is the image's`)
      t.equal(security?.allowPrivilegeEscalation, false, `${container.name}: no privilege escalation`)
      t.equal(security?.readOnlyRootFilesystem, true, `${container.name}: read-only root filesystem`)
      t.same(security?.capabilities, { drop: ['ALL'] }, `${container.name}: every capability dropped, none added`)
      t.notOk(security?.privileged, `${container.name}: not privileged`)
      t.ok(container.resources?.requests?.cpu && container.resources.requests.memory && container.resources.limits?.memory, `${container.name}: CPU and memory requested, memory limited`)
    }
  })

  t.test(`${folder}: every variable and Secret key is a setting of the service; the migration role only to the init container`, async (t) => {
    const { api, migrate, configMaps } = parts(t, objects)
    const secretNames = new Set<string>()
    for (const container of [migrate, api]) {
      const { env, secretKeys } = environment(t, container, configMaps)
      t.same(unknownSettings(Object.keys(env)), [], `${container.name}: no variable the service does not read`)
      t.same(unknownSettings(secretKeys.map(({ key }) => key)), [], `${container.name}: no Secret key the service does not read`)
      t.doesNotThrow(() => loadConfig(env), `${container.name}: the settings are valid (credentials stand-ins)`)
      for (const { name, key } of secretKeys) {
        secretNames.add(name)
        t.match(readme, new RegExp(`--from-literal=${key}=`), `${container.name}: ${key} is in deploy/README.md's Secret`)
      }
    }
    for (const name of secretNames) t.match(readme, `kubectl create secret generic ${name}`, `deploy/README.md creates Secret ${name}`)
    t.same(objects.filter((object) => object.kind === 'Secret'), [], 'no Secret in the manifests')

    const apiEnv = environment(t, api, configMaps)
    t.notOk('DATABASE_MIGRATION_URL' in apiEnv.env, 'the API does not get DATABASE_MIGRATION_URL')
    t.notOk(apiEnv.secretKeys.some(({ key }) => key === 'DATABASE_MIGRATION_URL'), 'nor its key under another name')
    t.equal(loadConfig(apiEnv.env).MIGRATE_ON_START, false, 'the API does not migrate at start')
    t.equal(loadConfig(apiEnv.env).NODE_ENV, 'production')
    const migrateEnv = environment(t, migrate, configMaps)
    t.equal(migrateEnv.env.DATABASE_MIGRATION_URL, PLACEHOLDERS.DATABASE_MIGRATION_URL, 'the init container gets DATABASE_MIGRATION_URL from the Secret')
    t.same(migrate.command, ['node', 'dist/bundle/server.js', 'migrate'], 'the init container runs the migrate command')
    t.equal(migrate.image, api.image, 'of the same image')
    // The API runs the image's CMD: the production entry.
    t.notOk(api.command ?? api.args, 'the API container keeps the image\'s command')
    t.match(dockerfile, /^CMD \["node", "dist\/bundle\/server\.js"\]$/m, 'which is node dist/bundle/server.js')
  })

  t.test(`${folder}: the HPA, PDB and metrics concern the Deployment's pods`, async (t) => {
    const { deployment, api, labels, hpa, pdb, configMaps, networkPolicies } = parts(t, objects)
    const config = loadConfig(environment(t, api, configMaps).env)
    t.same(deployment.spec?.selector.matchLabels, labels, 'the Deployment selects its pods by their labels')
    t.notOk('replicas' in deployment.spec!, 'no replicas in the Deployment: the HPA sets them')
    t.same(hpa.spec?.scaleTargetRef, { apiVersion: 'apps/v1', kind: 'Deployment', name: deployment.metadata?.name }, 'the HPA scales the Deployment')
    t.ok((hpa.spec?.minReplicas ?? 1) >= 2 && hpa.spec!.maxReplicas >= hpa.spec!.minReplicas!, `HPA from ${hpa.spec?.minReplicas} to ${hpa.spec?.maxReplicas} pods`)
    t.same(hpa.spec?.metrics?.map((metric) => [metric.resource?.name, metric.resource?.target.type]), [['cpu', 'Utilization']], 'on CPU utilisation')
    t.ok(subset(pdb.spec?.selector?.matchLabels, labels), 'the PDB selects the pods')
    for (const constraint of deployment.spec?.template.spec?.topologySpreadConstraints ?? []) {
      t.ok(subset(constraint.labelSelector?.matchLabels, labels), `the spread over ${constraint.topologyKey} counts the pods`)
    }
    const namespaces = new Set(objects.map((object) => object.metadata.namespace))
    t.equal(namespaces.size, 1, `one namespace for all (${[...namespaces].join(', ')})`)

    const metrics = containerPort(api, 'metrics')
    t.equal(metrics?.containerPort, config.METRICS_PORT, 'the port named metrics is METRICS_PORT')
    const annotations = deployment.spec?.template.metadata?.annotations ?? {}
    t.same([annotations['prometheus.io/scrape'], annotations['prometheus.io/port'], annotations['prometheus.io/path']], ['true', String(config.METRICS_PORT), '/metrics'], 'Prometheus\'s annotations name it')
    for (const policy of networkPolicies) {
      t.ok(subset(policy.spec?.podSelector?.matchLabels, labels), `NetworkPolicy ${policy.metadata?.name} concerns the pods`)
      const ports = policy.spec?.ingress?.flatMap((rule) => rule.ports ?? []) ?? []
      t.ok(ports.length > 0 && ports.every(({ port }) => containerPort(api, port) !== undefined), `NetworkPolicy ${policy.metadata?.name}: ports the API declares`)
    }
  })
}

t.test('the overlays set an image tag or digest and a namespace', async (t) => {
  for (const { folder, objects } of renders.slice(1)) {
    const { api } = parts(t, objects)
    const { tag, digest } = imageParts(api.image ?? '')
    t.ok((tag !== undefined && tag !== 'latest') || digest !== undefined, `${folder}: ${api.image}`)
    t.ok(objects.every((object) => object.metadata.namespace !== undefined), `${folder}: a namespace`)
  }
})
