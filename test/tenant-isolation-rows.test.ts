import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type CatalogueRoute, ROUTE_CATALOGUE, toRouterPath } from '../src/auth/catalogue'
import { EgressPolicy, parseAllowList } from '../src/egress/policy'
import { EMAIL_PATTERN } from '../src/util/email'
import { type DatabaseSnapshot, ownerOf, type Row, rowChanges, snapshot } from './support/db-snapshot'
import { type FakeProvider, startFakeProvider } from './support/fake-provider'
import { createHarness, DIALECTS, type Harness } from './support/harness'
import { buildWorld, type Kind, type World } from './support/tenant-world'

/**
 * Organisation A aims every catalogue route that names an object (in its path or its body) at
 * organisation B's real objects, and the whole database is compared before and after each request:
 * a refusal that answers 404 but has already deleted or changed something of B's is caught here,
 * where a test of the answer alone would pass. A's own rows may change (its audit entries, its key's
 * last use); nothing of B, and nothing that belongs to no organisation, may change, appear or vanish.
 */

/** What a path parameter names, by its name. */
const PARAM_KINDS: Record<string, Kind> = {
  teamId: 'team',
  roleId: 'role',
  apiKeyId: 'apiKey',
  proxyKeyId: 'proxyKey',
  providerKeyId: 'providerKey',
  ruleId: 'rateLimitRule',
  requestId: 'request',
  sessionId: 'session',
  propertyKey: 'property',
  grantId: 'mcpConnection',
  connectionId: 'mcpUpstreamConnection',
  memberUserId: 'user',
  webhookId: 'webhook',
  integrationId: 'integration',
  mappingId: 'downgradeMapping',
  chainId: 'fallbackChain',
}
/** `{id}` says nothing by itself: the route it sits in does (an organisation's own `{id}` is handled apart). */
const ID_PARAM_KINDS: ReadonlyArray<readonly [prefix: string, kind: Kind]> = [
  ['/v1/filter/{id}', 'filter'],
  ['/v1/vault/update/{id}', 'providerKey'],
  ['/v1/budget/window-limit', 'windowLimit'],
  ['/v1/budget/velocity-limit', 'velocityLimit'],
  ['/v1/governance/access-rules', 'accessRule'],
  ['/v1/mcp/servers/{id}', 'mcpServer'],
  ['/v1/tool-rates/{id}', 'toolRate'],
  ['/v1/a2a/agents/{id}', 'a2aAgent'],
]
/** Parameters that name nothing of an organisation's own. */
const FREE_PARAMS: Record<string, string> = { assetId: 'asset-1', type: 'slack', serverId: 'deepwiki' }
/** What an id field of a request body names, by its name. */
const BODY_KINDS: Record<string, Kind> = {
  userId: 'user',
  role: 'role',
  providerKeyId: 'providerKey',
  filterId: 'filter',
  requestIds: 'request',
  serverId: 'mcpServer',
  agentId: 'a2aAgent',
  limitId: 'windowLimit',
}
/**
 * Fields named like ids that name nothing of an organisation's: an OIDC client's id at the identity
 * provider, a Stripe customer, an AWS access key id.
 */
const NOT_ID_FIELDS: ReadonlySet<string> = new Set(['clientId', 'customerId', 'accessKeyId'])
/** `role` holds a custom role's id (or a built-in role's name); the others say so in their name. */
const isIdField = (name: string) => (/^id$|Ids?$/.test(name) || name === 'role') && !NOT_ID_FIELDS.has(name)
/** Kinds that are values to filter by, not records: a read filtered by B's finds nothing, and may say so with a 200. */
const VALUE_KINDS: ReadonlySet<Kind> = new Set(['property'])

/** Fields whose valid values a schema cannot say (a scope, a permission, a filter): well-formed, so the handler is reached. */
const FIELD_VALUES: Record<string, unknown> = {
  name: 'renamed-by-a',
  permissions: ['org.read'],
  scopes: ['gateway'],
  filter: 'all',
  customerId: 'cus_Isolation1',
  secret: 'sk-written-by-a-0123456789',
  baseUrl: 'https://provider.example.test/v1',
  expiresAt: '2099-01-01T00:00:00.000Z',
  windowSeconds: 60,
}
/** Strings tried in turn against a field's pattern and length. */
const STRING_CANDIDATES = ['x', 'https://idp.example.test', 'a.example.test']

/** The subset of JSON Schema that the routes' TypeBox models use. */
interface JsonSchema {
  type?: string
  properties?: Record<string, JsonSchema>
  required?: string[]
  anyOf?: JsonSchema[]
  const?: unknown
  enum?: unknown[]
  items?: JsonSchema
  minItems?: number
  minimum?: number
  exclusiveMinimum?: number
  minLength?: number
  maxLength?: number
  pattern?: string
  format?: string
}

let emails = 0

function sampleString(schema: JsonSchema): string {
  if (schema.format === 'email' || schema.pattern === EMAIL_PATTERN) return `new-${++emails}@a.example.test`
  if (schema.format === 'date-time') return '2099-01-01T00:00:00.000Z'
  const fits = (s: string) =>
    s.length >= (schema.minLength ?? 0) &&
    s.length <= (schema.maxLength ?? Number.POSITIVE_INFINITY) &&
    (schema.pattern === undefined || new RegExp(schema.pattern).test(s))
  const found = STRING_CANDIDATES.find(fits)
  if (found === undefined) throw new Error(`no sample string fits ${JSON.stringify(schema)}`)
  return found
}

/** A valid value of a schema: the first choice of a union, the least of a range, the fields it requires. */
function sample(schema: JsonSchema, field: string): unknown {
  if (field in FIELD_VALUES) return FIELD_VALUES[field]
  if (schema.const !== undefined) return schema.const
  if (schema.enum !== undefined) return schema.enum[0]
  if (schema.anyOf?.[0]) return sample(schema.anyOf[0], field)
  switch (schema.type) {
    case 'object':
      return sampleObject(schema, new Map())
    case 'array':
      return Array.from({ length: Math.max(1, schema.minItems ?? 0) }, () => sample(schema.items ?? {}, ''))
    case 'string':
      return sampleString(schema)
    case 'integer':
    case 'number':
      return schema.minimum ?? (schema.exclusiveMinimum === undefined ? 1 : schema.exclusiveMinimum + 1)
    case 'boolean':
      return true
    case 'null':
      return null
    default:
      // Unknown: any JSON value is valid.
      return {}
  }
}

/** Required fields, plus every id field (set to the slot's value) and every field with a known valid value. */
function sampleObject(schema: JsonSchema, ids: ReadonlyMap<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const id = ids.get(name)
    if (id !== undefined) out[name] = property.type === 'array' ? [id] : id
    else if (schema.required?.includes(name) || name in FIELD_VALUES) out[name] = sample(property, name)
  }
  return out
}

interface Slot {
  name: string
  where: 'path' | 'body'
  /** What it names; none for a parameter nobody has mapped yet (the route must then be unbuilt, 501). */
  kind: Kind | undefined
}

interface RoutePlan {
  route: CatalogueRoute
  orgParam: boolean
  slots: Slot[]
  body: JsonSchema | undefined
}

function planOf(route: CatalogueRoute, bodies: ReadonlyMap<string, JsonSchema>): RoutePlan | undefined {
  const [method, path] = route
  const orgParam = path.startsWith('/v1/organization/{id}')
  const slots: Slot[] = []
  for (const [, name] of path.matchAll(/\{(\w+)\}/g)) {
    if (name === undefined || (orgParam && name === 'id') || name in FREE_PARAMS) continue
    const kind = name === 'id' ? ID_PARAM_KINDS.find(([prefix]) => path.startsWith(prefix))?.[1] : PARAM_KINDS[name]
    slots.push({ name, where: 'path', kind })
  }
  const body = bodies.get(`${method} ${toRouterPath(path)}`)
  for (const name of Object.keys(body?.properties ?? {}).filter(isIdField)) {
    // A body's own `id` names what its route is about, as a path's `{id}` does.
    const kind = name === 'id' ? ID_PARAM_KINDS.find(([prefix]) => path.startsWith(prefix))?.[1] : BODY_KINDS[name]
    slots.push({ name, where: 'body', kind })
  }
  return orgParam || slots.length > 0 ? { route, orgParam, slots, body } : undefined
}

interface Aim {
  org: 'A' | 'B'
  /** Slot name -> which organisation's object, and which of its objects of that kind. */
  picks: Map<string, { of: 'A' | 'B'; index: number }>
}

/**
 * The requests that name B's objects: everything B's (B's organisation in the path when there is one),
 * then, in A's own organisation, B's objects in every slot at once, and B's objects one slot at a time
 * with A's own in the others (A acting on its own team, naming B's user).
 */
function aims(plan: RoutePlan, b: World): Aim[] {
  const allB = () => new Map(plan.slots.map((s) => [s.name, { of: 'B' as const, index: 0 }]))
  const out: Aim[] = [{ org: 'B', picks: allB() }]
  if (plan.orgParam && plan.slots.length > 0) out.push({ org: 'A', picks: allB() })
  for (const slot of plan.slots) {
    const candidates = slot.kind ? b.ids[slot.kind].length : 1
    for (let index = 0; index < candidates; index++) {
      const picks = new Map(plan.slots.map((s) => [s.name, { of: 'A' as 'A' | 'B', index: 0 }]))
      picks.set(slot.name, { of: 'B', index })
      out.push({ org: 'A', picks })
    }
  }
  return out
}

interface Action {
  label: string
  method: string
  path: string
  body: unknown
  token: string
  routeKey: string
  /** B's organisation or one of B's records is named in the path: the answer must be 404. */
  namesBRecordInPath: boolean
  write: boolean
  unmapped: boolean
}

function actionsOf(plan: RoutePlan, a: World, b: World, who: string, token: string): Action[] {
  const [method, path, permission] = plan.route
  const seen = new Set<string>()
  const out: Action[] = []
  for (const aim of aims(plan, b)) {
    const world = (of: 'A' | 'B') => (of === 'A' ? a : b)
    const idFor = (slot: Slot) => {
      const pick = aim.picks.get(slot.name) ?? { of: 'B', index: 0 }
      return slot.kind ? (world(pick.of).ids[slot.kind][pick.index] as string) : `unmapped-${slot.name}`
    }
    const concrete = path.replace(/\{(\w+)\}/g, (_, name: string) => {
      if (plan.orgParam && name === 'id') return world(aim.org).org.orgId
      if (name in FREE_PARAMS) return FREE_PARAMS[name] as string
      const slot = plan.slots.find((s) => s.name === name)
      return slot ? idFor(slot) : name
    })
    const named = [
      ...(plan.orgParam ? [`id=${aim.org}`] : []),
      ...plan.slots.map((s) => {
        const pick = aim.picks.get(s.name) ?? { of: 'B', index: 0 }
        return `${s.name}=${pick.of}${pick.index > 0 ? `#${pick.index}` : ''}`
      }),
    ]
    // Two aims may name the same objects (a route with one slot): one request is enough.
    const label = `${method} ${path} [${named.join(', ')}] as ${who}`
    if (seen.has(label)) continue
    seen.add(label)
    const bodyIds = new Map(plan.slots.filter((s) => s.where === 'body').map((s) => [s.name, idFor(s)]))
    out.push({
      label,
      method,
      path: concrete,
      body: plan.body ? sampleObject(plan.body, bodyIds) : method === 'GET' ? undefined : {},
      token,
      routeKey: `${method} ${path}`,
      namesBRecordInPath:
        (plan.orgParam && aim.org === 'B') ||
        plan.slots.some((s) => s.where === 'path' && aim.picks.get(s.name)?.of === 'B' && !(s.kind && VALUE_KINDS.has(s.kind))),
      write: method !== 'GET' && permission !== 'traffic.read',
      unmapped: plan.slots.some((s) => s.kind === undefined),
    })
  }
  return out
}

/** Destructive requests last, so that a leak of one of them cannot hide what the others would do. */
const METHOD_ORDER = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']

interface Findings {
  /** Rows of B, or of no organisation, that an action of A changed, added or removed. */
  foreignRows: string[]
  /** A's own rows that came to name one of B's objects (audit entries excepted: they record what was asked). */
  crossReferences: string[]
  /** Answers that are not the refusal the request deserves. */
  answers: string[]
  /** Answers that show one of B's ids or names. */
  leaks: string[]
  /** Requests refused by schema validation: they never reached the handler, so they proved nothing. */
  invalid: string[]
  /** Built routes with a parameter or id field that names no kind of object yet. */
  unmapped: string[]
  /** Routes that answered something else: the ones the walk really checked. */
  walked: Set<string>
  /** Tables in which B holds no row, so that nothing there is being protected. */
  tablesWithoutB: string[]
  actions: number
}

const describeRow = (row: Row) => JSON.stringify(row)

/** The async writes of the set-up (an API key's last use) land before the first snapshot is taken. */
async function settled(h: Harness): Promise<DatabaseSnapshot> {
  let last = await snapshot(h.db)
  for (let i = 0; i < 50; i++) {
    await Bun.sleep(10)
    const next = await snapshot(h.db)
    if (rowChanges(last, next).length === 0) return next
    last = next
  }
  throw new Error('the database kept changing after the set-up')
}

async function walk(h: Harness, a: World, b: World): Promise<Findings> {
  const findings: Findings = {
    foreignRows: [],
    crossReferences: [],
    answers: [],
    leaks: [],
    invalid: [],
    unmapped: [],
    walked: new Set(),
    tablesWithoutB: [],
    actions: 0,
  }
  const bodies = new Map<string, JsonSchema>()
  for (const route of h.app.routes) {
    const schema = (route.hooks as { body?: unknown } | undefined)?.body
    if (typeof schema === 'object' && schema !== null) bodies.set(`${route.method} ${route.path}`, schema as JsonSchema)
  }
  const keyPermissions = await h.request('GET', `/v1/organization/${a.org.orgId}/permissions/me`, { token: a.org.apiKey })
  const granted = new Set(((await keyPermissions.json()) as { data: { permissions: string[] } }).data.permissions)

  const actions: Action[] = []
  for (const route of ROUTE_CATALOGUE) {
    const plan = planOf(route, bodies)
    if (!plan) continue
    actions.push(...actionsOf(plan, a, b, 'the Owner session', a.org.ownerSession))
    if (granted.has(route[2])) actions.push(...actionsOf(plan, a, b, 'an API key', a.org.apiKey))
  }
  actions.sort((x, y) => METHOD_ORDER.indexOf(x.method) - METHOD_ORDER.indexOf(y.method))
  findings.actions = actions.length

  const bIds = Object.values(b.ids).flat()
  let before = await settled(h)
  for (const [table, rows] of before) {
    const parsed = rows.map((r) => JSON.parse(r) as Row)
    const scoped = table === 'organizations' || parsed.some((r) => 'org_id' in r)
    if (parsed.length === 0 || (scoped && !parsed.some((r) => ownerOf(table, r) === b.org.orgId)))
      findings.tablesWithoutB.push(table)
  }

  for (const action of actions) {
    const response = await h.request(action.method, action.path, { token: action.token, body: action.body })
    const text = await response.text()
    const after = await snapshot(h.db)
    for (const { table, change, row } of rowChanges(before, after)) {
      const owner = ownerOf(table, row)
      if (owner !== a.org.orgId) findings.foreignRows.push(`${action.label}: ${table} row ${change}: ${describeRow(row)}`)
      else if (table !== 'audit_log' && bIds.some((id) => describeRow(row).includes(id)))
        findings.crossReferences.push(`${action.label}: ${table} row ${change}: ${describeRow(row)}`)
    }
    before = after

    if (response.status === 501) {
      // Not built yet: it joins the walk by itself once it is. Only the catalogue's stub may answer 501,
      // or a built route answering it would skip the checks below.
      if (!text.includes('"code":"not_implemented"')) findings.answers.push(`${action.label}: 501 ${text}`)
      continue
    }
    findings.walked.add(action.routeKey)
    if (action.unmapped) findings.unmapped.push(action.label)
    const code = (JSON.parse(text.startsWith('{') ? text : '{}') as { error?: { code?: string } }).error?.code
    if (code === 'validation_failed') findings.invalid.push(`${action.label}: ${text}`)
    const [expected, fits] = action.namesBRecordInPath
      ? ['404', response.status === 404]
      : action.write
        ? ['a 4xx', response.status >= 400 && response.status < 500]
        : ['a 2xx or 4xx', response.status < 300 || (response.status >= 400 && response.status < 500)]
    if (!fits) findings.answers.push(`${action.label}: ${response.status} (expected ${expected}) ${text.slice(0, 300)}`)
    // An id A sent, said back ("role <id> is not a role of this organization"), tells A nothing it did not know.
    const sent = `${action.path} ${JSON.stringify(action.body ?? null)}`
    const rest = bIds.filter((id) => sent.includes(id)).reduce((t, id) => t.replaceAll(id, '<sent>'), text)
    const shown = b.markers.filter((marker) => rest.includes(marker))
    if (shown.length > 0) findings.leaks.push(`${action.label}: shows ${shown.join(', ')}`)
  }
  return findings
}

let fake: FakeProvider
beforeAll(async () => {
  fake = await startFakeProvider()
})
afterAll(() => fake.close())

for (const dialect of DIALECTS) {
  describe(`organisation A naming B's objects changes none of B's rows (${dialect})`, () => {
    let h: Harness
    let findings: Findings

    // Two worlds built through the API, then some 150 requests, each followed by a whole-database snapshot.
    beforeAll(async () => {
      // The worlds' provider keys name the fake provider on loopback, which the operator allows here.
      h = await createHarness({ dialect, egress: new EgressPolicy({ enabled: true, allow: parseAllowList('127.0.0.1') }) })
      const a = await buildWorld(h, await h.org('enterprise'), 'a', fake.openaiBaseUrl)
      const b = await buildWorld(h, await h.org('enterprise'), 'b', fake.openaiBaseUrl)
      findings = await walk(h, a, b)
    }, 30_000)
    afterAll(() => h.close())

    test('B holds rows in every table, so every table has something to protect', () => {
      expect(findings.tablesWithoutB).toEqual([])
    })

    test("the walk reaches the built routes that name an object, A's own objects naming B's ids in the body included", () => {
      expect(findings.actions).toBeGreaterThan(100)
      expect([...findings.walked]).toEqual(
        expect.arrayContaining([
          'DELETE /v1/team/{teamId}',
          'POST /v1/team/{teamId}/member',
          'DELETE /v1/team/{teamId}/member',
          'POST /v1/organization/{id}/add_member',
          'POST /v1/organization/{id}/update_member',
          'DELETE /v1/organization/{id}/remove_member',
          'POST /v1/organization/{id}/update_owner',
          'POST /v1/organization/{id}/update_filter',
          'POST /v1/api-keys/proxy-key',
          'PUT /v1/gateway/fallback-chains/{chainId}',
          'DELETE /v1/gateway/fallback-chains/{chainId}',
          'PATCH /v1/governance/access-rules/{id}',
          'DELETE /v1/governance/access-rules/{id}',
          'PATCH /v1/mcp/servers/{id}',
          'DELETE /v1/mcp/servers/{id}',
          'POST /v1/mcp/servers/{id}/probe',
          'DELETE /v1/tool-rates/{id}',
          'PATCH /v1/a2a/agents/{id}',
          'DELETE /v1/a2a/agents/{id}',
          'PUT /v1/a2a/agents/{id}/keys',
          'POST /v1/a2a/agents/{id}/probe',
        ]),
      )
    })

    test('no request of A changes, adds or removes a row of B, or a row of no organisation', () => {
      expect(findings.foreignRows).toEqual([])
    })

    test("A's own rows never come to name B's objects (only A's audit entries record what A asked for)", () => {
      expect(findings.crossReferences).toEqual([])
    })

    test("B's organisation or records in the path are 404; other writes naming B's objects are refused with a 4xx", () => {
      expect(findings.answers).toEqual([])
    })

    test("no answer shows B's ids or names", () => {
      expect(findings.leaks).toEqual([])
    })

    test('every request is well formed and reaches its handler (a validation error would prove nothing)', () => {
      expect(findings.invalid).toEqual([])
    })

    test('every built route names a kind of object in each of its parameters and id fields', () => {
      expect(findings.unmapped).toEqual([])
    })
  })
}
