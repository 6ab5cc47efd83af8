import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ROUTE_CATALOGUE } from '../src/auth/catalogue'
import { createHarness, type Harness, type Org } from './support/harness'

let h: Harness
let a: Org
let b: Org

beforeAll(async () => {
  h = await createHarness()
  a = await h.org('enterprise')
  b = await h.org('enterprise')
})
afterAll(() => h.close())

const orgRoutes = ROUTE_CATALOGUE.filter(([, path]) => path.startsWith('/v1/organization/{id}'))

describe('tenant isolation on /v1/organization/{id}/...', () => {
  test('covers every organisation route of the catalogue', () => {
    expect(orgRoutes.length).toBeGreaterThan(20)
  })

  for (const [who, token] of [
    ['an Owner session', () => a.ownerSession],
    ['an API key', () => a.apiKey],
  ] as const) {
    test(`${who} of org A gets 404 for every route naming org B, with no data`, async () => {
      const results = await Promise.all(
        orgRoutes.map(async ([method, path]) => {
          const concrete = path.replace('{id}', b.orgId).replace(/\{(\w+)\}/g, 'x')
          const response = await h.request(method, concrete, { token: token(), body: method === 'GET' ? undefined : {} })
          return { route: `${method} ${path}`, status: response.status, body: await response.text() }
        }),
      )
      expect(results.filter((r) => r.status !== 404)).toEqual([])
      expect(results.filter((r) => r.body.includes(b.orgId))).toEqual([])
    })
  }

  test('an organisation id that does not exist is 404 just the same', async () => {
    const response = await h.request('GET', `/v1/organization/${crypto.randomUUID()}/permissions/me`, { token: a.ownerSession })
    expect(response.status).toBe(404)
  })

  test("the caller's own organisation is served", async () => {
    const response = await h.request('GET', `/v1/organization/${a.orgId}/permissions/me`, { token: a.apiKey })
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({
      data: { principal: 'api_key', role: null, permissions: ['org.read', 'traffic.read', 'traffic.annotate'] },
      error: null,
    })
  })
})
