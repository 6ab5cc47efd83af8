import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ROUTE_CATALOGUE } from '../src/auth/catalogue'
import { createHarness, type Harness, type Org } from './support/harness'
import { requestRecord } from './support/records'

/**
 * Organisation isolation on every route of the traffic permissions: organisation B's data carries
 * markers in every table the routes read; organisation A walks every route, naming B's resources where
 * a route takes one, and must see none of the markers and none of B's resources.
 */
const TRAFFIC_ROUTES = ROUTE_CATALOGUE.filter(([, , p]) => p === 'traffic.read' || p === 'traffic.annotate')
const MARKERS = ['model-of-b', 'user-of-b', 'session-of-b', 'value-of-b', 'score-of-b', 'server-of-b', 'agent-of-b', 'scope-of-b']
const B_REQUEST = 'b0000000-0000-4000-8000-00000000000b'
const WHEN = new Date(Date.UTC(2026, 6, 1, 12))
const WINDOW = { timeFilter: { start: '2026-06-01T00:00:00Z', end: '2026-07-31T00:00:00Z' }, dbIncrement: 'day' }

/** Routes whose body is not the window of the traffic views. */
const BODIES: Record<string, unknown> = {
  '/v1/request/query': { limit: 1000, includeBodies: true },
  '/v1/request/query-clickhouse': { limit: 1000, includeBodies: true },
  '/v1/request/count/query': {},
  '/v1/request/query-ids': { requestIds: [B_REQUEST], includeBodies: true },
  '/v1/request/{requestId}/assets/{assetId}': undefined,
  '/v1/test/gateway-request': { model: 'gpt-4o' },
  '/v1/metrics/propertyAggregation': { ...WINDOW, property: 'prop-of-b' },
  '/v1/spend/by': { ...WINDOW, groupBy: 'property:prop-of-b' },
  '/v1/request/{requestId}/feedback': { rating: true },
  '/v1/request/{requestId}/score': { name: 'mine', value: 1 },
  '/v1/request/{requestId}/property': { key: 'mine', value: 'x' },
  '/v1/session/{sessionId}/feedback': { rating: 1 },
  '/v1/session/{sessionId}/tag': { tag: 'mine' },
  '/v1/property/hidden/query': {},
}
/** Windows of the views over other logs take no request filter; the rest take the window as is. */
const TIME_ONLY = ['/v1/mcp/', '/v1/a2a/', '/v1/budget/actions/']
const bodyFor = (path: string): unknown =>
  path in BODIES ? BODIES[path] : TIME_ONLY.some((p) => path.startsWith(p)) ? WINDOW : { ...WINDOW, filter: 'all' }

/** B's resources named in the path: its request, its session, its property. */
const concrete = (path: string) =>
  path
    .replace('{requestId}', B_REQUEST)
    .replace('{sessionId}', 'session-of-b')
    .replace('{propertyKey}', 'prop-of-b')
    .replace('{assetId}', 'asset-1')
/** Routes that name one of B's resources answer 404: to A it does not exist. */
const namesAResource = (path: string) => path.includes('{requestId}') || path.includes('{sessionId}')

let h: Harness
let a: Org
let b: Org

beforeAll(async () => {
  h = await createHarness()
  a = await h.org('enterprise')
  b = await h.org('enterprise')
  await h.store.requests.insertMany([
    requestRecord({ id: 'a-1', orgId: a.orgId, userId: 'user-of-a', sessionId: 'session-of-a', createdAt: WHEN }),
    requestRecord({
      id: B_REQUEST,
      orgId: b.orgId,
      model: 'model-of-b',
      userId: 'user-of-b',
      sessionId: 'session-of-b',
      properties: { 'prop-of-b': 'value-of-b' },
      createdAt: WHEN,
    }),
  ])
  await h.store.requestBodies.insertMany([
    { requestId: B_REQUEST, orgId: b.orgId, requestBody: 'user-of-b', responseBody: null, truncated: false, createdAt: WHEN },
  ])
  await h.store.requestFlags.insertMany([
    { requestId: B_REQUEST, orgId: b.orgId, kind: 'pii', category: 'email', occurrences: 1, createdAt: WHEN },
    { requestId: B_REQUEST, orgId: b.orgId, kind: 'injection', category: 'role_override', occurrences: 1, createdAt: WHEN },
  ])
  await h.store.org(b.orgId).annotations.score({
    requestId: B_REQUEST,
    name: 'score-of-b',
    value: 1,
    actorId: null,
    createdAt: WHEN,
  })
  const call = {
    userId: null,
    apiKeyId: null,
    status: 'success' as const,
    latencyMs: 1,
    costNano: 1,
    error: null,
    createdAt: WHEN,
  }
  await h.store.mcpToolCalls.add({ id: 'm-b', orgId: b.orgId, serverId: 's', serverName: 'server-of-b', toolName: 't', ...call })
  await h.store.a2aCalls.add({ id: 'c-b', orgId: b.orgId, agentId: 'g', agentName: 'agent-of-b', skill: null, ...call })
  await h.store.budgetActions.add({
    id: 'x-b',
    orgId: b.orgId,
    scope: 'scope-of-b',
    scopeId: null,
    action: 'block',
    requestId: null,
    model: null,
    amountNano: 1,
    createdAt: WHEN,
  })
})
afterAll(() => h.close())

describe('organisation isolation on every traffic route', () => {
  test('the walk covers every traffic.read and traffic.annotate route of the catalogue', () => {
    expect(TRAFFIC_ROUTES.length).toBe(62)
  })

  for (const [who, token] of [
    ['an API key', () => a.apiKey],
    ['an Owner session', () => a.ownerSession],
  ] as const) {
    test(`${who} of A sees none of B's data, and B's requests and sessions are not found`, async () => {
      const results = await Promise.all(
        TRAFFIC_ROUTES.map(async ([method, path]) => {
          const response = await h.request(method, concrete(path), { token: token(), body: bodyFor(path) })
          return { route: `${method} ${path}`, status: response.status, body: await response.text() }
        }),
      )
      const expected = (route: string) => (namesAResource(route) ? 404 : 200)
      expect(results.filter((r) => r.status !== expected(r.route)).map((r) => `${r.route}: ${r.status} ${r.body}`)).toEqual([])
      expect(results.filter((r) => MARKERS.some((m) => r.body.includes(m))).map((r) => r.route)).toEqual([])
    })
  }

  test("B's own key does see its data through the same routes (the markers are real)", async () => {
    const response = await h.request('POST', '/v1/request/query', { token: b.apiKey, body: {} })
    expect(await response.text()).toContain('model-of-b')
  })

  test("nothing A sent changed B's data", async () => {
    expect(await h.store.org(b.orgId).annotations.scoresOf(B_REQUEST)).toEqual([{ name: 'score-of-b', value: 1 }])
    expect((await h.store.requests.get(b.orgId, B_REQUEST))?.properties).toEqual({ 'prop-of-b': 'value-of-b' })
  })

  test('a key scoped to the gateway alone is refused every traffic route (403)', async () => {
    const created = await h.request('POST', '/v1/api-keys', { token: a.ownerSession, body: { name: 'gw', scopes: ['gateway'] } })
    const key = ((await created.json()) as { data: { key: string } }).data.key
    const statuses = await Promise.all(
      TRAFFIC_ROUTES.map(async ([method, path]) => ({
        route: `${method} ${path}`,
        status: (await h.request(method, concrete(path), { token: key, body: bodyFor(path) })).status,
      })),
    )
    expect(statuses.filter((s) => s.status !== 403)).toEqual([])
  })
})
