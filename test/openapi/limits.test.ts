import fs from 'node:fs'
import path from 'node:path'
import t, { type Test } from 'tap'
import { projectRoot } from '../../lib/project-root.js'
import { build, json } from '../helpers/index.js'

// docs/operations.md's Limits table against the OpenAPI document: every bound on what a request
// may be (a body's size, a string's length, a list's, an integer's range, a capture's length, the
// headers' size) is in the document, as a keyword (`maxLength`, `maxItems`, `maximum`,
// `x-body-limit`) or in words where OpenAPI has none, with the table's figure. A row is either
// checked here or said to bound no request's content; a new row is neither until it is placed.

interface Schema { $ref?: string, type?: string, minimum?: number, maximum?: number, maxLength?: number, maxItems?: number, items?: Schema, properties?: Record<string, Schema>, anyOf?: Schema[], oneOf?: Schema[] }
interface Parameter { in: string, name: string, schema: Schema }
interface Operation {
  operationId: string
  parameters?: Parameter[]
  requestBody?: { description?: string, 'x-body-limit'?: number, content: Record<string, { schema: Schema }> }
  responses: Record<string, { description: string }>
}
interface Document { info: { description: string }, paths: Record<string, Record<string, Operation>>, components: { schemas: Record<string, Schema> } }

/** The rows of the Limits table: the bound, its setting and default, what a client gets past it. */
function limitsTable (): Array<{ bound: string, setting: string, past: string }> {
  const text = fs.readFileSync(path.join(projectRoot, 'docs', 'operations.md'), 'utf8')
  const section = text.slice(text.indexOf('\n## Limits\n'), text.indexOf('\n## ', text.indexOf('\n## Limits\n') + 1))
  return section.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| Bound ') && !line.startsWith('|---'))
    .map((line) => {
      const [bound = '', setting = '', past = ''] = line.slice(2, -2).split(' | ')
      return { bound, setting, past }
    })
}

/** The first figure of a cell: `8 KiB` in bytes, `10,000,000`, `±9007199254740991`. */
function figure (cell: string): number {
  const kib = /(\d+) KiB/.exec(cell)
  if (kib !== null) return Number(kib[1]) * 1024
  const mib = /(\d+) MiB/.exec(cell)
  if (mib !== null) return Number(mib[1]) * 1024 * 1024
  const number = /\d[\d,]*/.exec(cell)
  if (number === null) throw new Error(`no figure in ${cell}`)
  return Number(number[0].replace(/,/g, ''))
}

/** The operations a cell names: `` `POST /users` ``, `` `PUT /users/{userid}` ``. */
const operationsNamed = (cell: string) => [...cell.matchAll(/`(GET|POST|PUT|DELETE) ([^`]+)`/g)].map(([, method, route]) => [(method as string).toLowerCase(), route as string] as const)

/** Rows that bound no request's content, and why; matched by the start of their Bound cell. */
const NOT_OF_A_REQUEST: Record<string, string> = {
  'What is read of a body refused or left unread': 'what the server reads of a request it has refused already',
  'A request\'s headers; the whole request': 'time, which no schema holds',
  'An idle keep-alive connection': 'a connection, not a request',
  'API connections at once': 'connections, not a request',
  'Metrics connections at once': 'the metrics listener, which the document does not describe',
  'Metrics request headers': 'the metrics listener, which the document does not describe',
  'Failed logins per client address and user name': 'a count over time (the 429 is documented where it is answered)',
  'Failed logins per client address': 'a count over time (the 429 is documented where it is answered)',
  'Failed logins per client network': 'a count over time (the 429 is documented where it is answered)',
  'Failed-login counts in memory': 'the server\'s own memory',
  'Failed-login counts in PostgreSQL': 'the database\'s disk',
  'Requests per client address': 'a rate, off by default (the 429 is documented where it is answered)',
  Overload: 'the server\'s load',
  'A query, or the wait for a database connection': 'the database\'s time',
  'Database connections held by long lists': 'the database pool',
  'Start-up': 'the process, not a request',
  'From `SIGTERM` to exit': 'the process, not a request',
  'Log lines waiting for stdout': 'the logs',
  'Log lines gathered before a write': 'the logs',
  'Request lines held until the end of the turn': 'the logs',
  '`TRUST_PROXY` in production': 'a setting, refused at start',
  'Client input quoted': 'what the service writes, not what it accepts',
  '`X-Request-Id` taken from a request': 'it refuses nothing: a longer id is replaced by a new one, and the request answered',
  'Streamed answers open at once per client address': 'a count of open answers (the 429 is documented where it is answered)',
  'What a streamed answer is produced ahead of its reader': 'what the server produces, not what it accepts',
  'Requests of one connection in flight': 'a connection, not a request'
}

t.test('every bound of the Limits table on what a request may be is in the OpenAPI document, with the table\'s figure', async (t) => {
  const server = await build(t)
  const document = json<Document>(await server.inject({ url: '/openapi.json' }))
  const operations = Object.entries(document.paths).flatMap(([route, item]) => Object.entries(item).map(([method, operation]) => ({ method, route, operation })))
  const operation = (method: string, route: string) => document.paths[route]?.[method]
  const component = (name: string) => document.components.schemas[name] as Schema
  const property = (name: string, field: string) => component(name).properties?.[field] as Schema
  const withBody = new Set<Operation>()

  /** What each row that bounds a request checks: its Bound cell matched by its start. */
  const checks: Array<[start: string, check: (t: Test, setting: string, bound: string) => void]> = [
    ['Request body of ', (t, setting, bound) => {
      const named = operationsNamed(bound)
      t.ok(named.length > 0, 'the operations are named')
      for (const [method, route] of named) {
        const body = operation(method, route)?.requestBody
        if (body !== undefined) withBody.add(operation(method, route)!)
        t.equal(body?.['x-body-limit'], figure(setting), `${method} ${route}: x-body-limit`)
        t.match(body?.description, `At most ${figure(setting)} bytes`, `${method} ${route}: in the body's description`)
      }
    }],
    ['A body on any other endpoint', (t, setting) => {
      t.equal(figure(setting), 0)
      t.equal(withBody.size, 6, 'after the rows of the bodies, which name six operations')
      const others = operations.filter(({ operation }) => !withBody.has(operation))
      t.same(others.filter(({ operation }) => operation.requestBody !== undefined).map(({ operation }) => operation.operationId), [], 'no request body')
      t.same(others.filter(({ operation }) => operation.responses['413'] === undefined).map(({ operation }) => operation.operationId), [], 'and a 413')
    }],
    ['Request `Content-Encoding`', (t, setting) => {
      t.match(setting, /^`identity` only/)
      const reading = operations.filter(({ operation }) => operation.requestBody !== undefined)
      t.ok(reading.length >= 6, 'the operations that read a body')
      for (const { operation } of reading) {
        t.match(operation.responses['415']?.description, /`Content-Encoding` other than `identity`/, `${operation.operationId}: its 415`)
      }
    }],
    ['Any body, every endpoint', (t, setting) => {
      const limits = operations.flatMap(({ operation }) => operation.requestBody?.['x-body-limit'] ?? [])
      t.ok(limits.length > 0 && limits.every((limit) => limit <= figure(setting)), `every x-body-limit at most ${figure(setting)}`)
    }],
    ['A name (user, product, marketing client)', (t, setting) => {
      for (const [schema, field] of [['User', 'name'], ['Product', 'name'], ['ClientInfo', 'clientName']] as const) {
        t.equal(property(schema, field).maxLength, figure(setting), `${schema}.${field}`)
      }
    }],
    ['An e-mail address (user, marketing client)', (t, setting) => {
      for (const [schema, field] of [['User', 'email'], ['ClientInfo', 'clientEmail']] as const) {
        t.equal(property(schema, field).maxLength, figure(setting), `${schema}.${field}`)
      }
    }],
    ['`registration_date`', (t, setting) => { t.equal(property('User', 'registration_date').maxLength, figure(setting)) }],
    ['Interests of a marketing client', (t, setting) => {
      const [items, length] = [...setting.matchAll(/\d+/g)].map(([digits]) => Number(digits))
      const interests = property('ClientInfo', 'clientInterestedIn')
      t.equal(interests.maxItems, items, 'maxItems')
      t.equal(interests.items?.maxLength, length, 'each: maxLength')
    }],
    ['Integers (captures, query, headers, bodies)', (t, setting) => {
      const bound = figure(setting)
      const integers: Array<[string, Schema]> = []
      const seen = new Set<Schema>()
      const walk = (where: string, schema: Schema | undefined): void => {
        if (schema === undefined || seen.has(schema)) return
        seen.add(schema)
        if (schema.$ref !== undefined) return walk(where, component(schema.$ref.replace('#/components/schemas/', '')))
        if (schema.type === 'integer') integers.push([where, schema])
        for (const [name, child] of Object.entries(schema.properties ?? {})) walk(`${where}.${name}`, child)
        walk(`${where}[]`, schema.items)
        for (const member of [...schema.anyOf ?? [], ...schema.oneOf ?? []]) walk(where, member)
      }
      for (const { operation } of operations) {
        for (const parameter of operation.parameters ?? []) walk(`${operation.operationId} ${parameter.in} ${parameter.name}`, parameter.schema)
        for (const [type, media] of Object.entries(operation.requestBody?.content ?? {})) walk(`${operation.operationId} ${type}`, media.schema)
      }
      t.ok(integers.length >= 10, `${integers.length} integers a request carries`)
      t.same(integers.filter(([, schema]) => !(schema.minimum !== undefined && schema.minimum >= -bound && schema.maximum !== undefined && schema.maximum <= bound))
        .map(([where]) => where), [], `each within ±${bound}`)
    }],
    ['A path capture', (t, setting) => {
      const captured = operations.filter(({ operation }) => (operation.parameters ?? []).some((parameter) => parameter.in === 'path' && parameter.name !== 'path'))
      t.ok(captured.length >= 5, 'the operations with captures')
      for (const { operation } of captured) {
        t.match(operation.responses['414']?.description, `longer than ${figure(setting)} characters`, `${operation.operationId}: its 414`)
      }
    }],
    ['Request line and headers', (t, setting) => {
      t.match(document.info.description, `The request line and headers together are at most ${figure(setting)} bytes: 431 above.`, 'in the document\'s description')
    }],
    ['`GET /userStream?count`', (t, setting) => {
      const count = operation('get', '/userStream')?.parameters?.find((parameter) => parameter.name === 'count')
      t.equal(count?.schema.maximum, figure(setting))
    }],
    ['Items per collection', (t, setting, bound) => {
      const ceiling = Number(/`COLLECTION_MAX_ITEMS` ([\d,]+)/.exec(setting)?.[1]?.replace(/,/g, ''))
      const named = operationsNamed(bound)
      t.equal(named.length, 2, 'the operations that add an item')
      for (const [method, route] of named) {
        t.match(operation(method, route)?.responses['409']?.description, `holds ${ceiling} `, `${method} ${route}: its 409 says the ceiling`)
      }
    }]
  ]

  const rows = limitsTable()
  t.ok(rows.length >= 30, `${rows.length} rows`)
  for (const row of rows) {
    const check = checks.find(([start]) => row.bound.startsWith(start))
    const excluded = Object.keys(NOT_OF_A_REQUEST).find((start) => row.bound.startsWith(start))
    if (check !== undefined) {
      await t.test(row.bound, async (t) => { check[1](t, row.setting, row.bound) })
    } else {
      t.ok(excluded, `${row.bound}: checked against the document, or listed as no bound on a request (${excluded === undefined ? 'neither' : NOT_OF_A_REQUEST[excluded]})`)
    }
  }
  const placed = (start: string) => rows.some((row) => row.bound.startsWith(start))
  t.same([...checks.map(([start]) => start), ...Object.keys(NOT_OF_A_REQUEST)].filter((start) => !placed(start)), [], 'every check has its row')
})
