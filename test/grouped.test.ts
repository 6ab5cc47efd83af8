import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { RequestRecord } from '../src/store/repositories/requests'
import { createHarness, DIALECTS, type Harness, type Org } from './support/harness'
import { requestRecord } from './support/records'

const record = (orgId: string, i: number, extra: Partial<RequestRecord>): RequestRecord =>
  requestRecord({ id: `${orgId.slice(0, 6)}-${i}`, orgId, createdAt: new Date(Date.UTC(2026, 10, 22, 6, i)), ...extra })

for (const dialect of DIALECTS) {
  describe(`grouped views on ${dialect}`, () => {
    let h: Harness
    let org: Org
    const window = { timeFilter: { start: '2026-11-22T00:00:00Z', end: '2026-11-23T00:00:00Z' } }
    const post = async <T>(path: string, body: Record<string, unknown>, token = org.apiKey) => {
      const response = await h.request('POST', path, { token, body: { ...window, ...body } })
      expect({ path, status: response.status }).toEqual({ path, status: 200 })
      return ((await response.json()) as { data: T }).data
    }
    type Group = { key: string; requests: number; cost: number }

    beforeAll(async () => {
      h = await createHarness({ dialect })
      org = await h.org('growth')
      await h.store.requests.insertMany([
        record(org.orgId, 1, {
          model: 'gpt-4o',
          userId: 'ann',
          sessionId: 's1',
          country: 'DE',
          properties: { customer: 'acme', plan: 'pro' },
        }),
        record(org.orgId, 2, {
          model: 'gpt-4o',
          userId: 'ann',
          sessionId: 's1',
          costNano: 3_000_000,
          country: 'DE',
          properties: { customer: 'acme' },
          createdAt: new Date(Date.UTC(2026, 10, 22, 9, 30)),
        }),
        record(org.orgId, 3, {
          model: 'claude-sonnet-4-5',
          provider: 'anthropic',
          userId: 'bob',
          status: 'error',
          properties: { customer: 'globex' },
        }),
      ])
      const other = await h.org('growth')
      await h.store.requests.insertMany([record(other.orgId, 1, { model: 'gpt-4o', userId: 'eve', properties: { secret: 'x' } })])
    })
    afterAll(() => h.close())

    test('spend by model and by a property; providers', async () => {
      const byModel = await post<Group[]>('/v1/spend/by', { groupBy: 'model' })
      expect(byModel.map((g) => [g.key, g.requests, g.cost])).toEqual([
        ['gpt-4o', 2, 0.004],
        ['claude-sonnet-4-5', 1, 0.001],
      ])
      const byCustomer = await post<Group[]>('/v1/spend/by', { groupBy: 'property:customer' })
      expect(byCustomer.map((g) => [g.key, g.cost])).toEqual([
        ['acme', 0.004],
        ['globex', 0.001],
      ])
      const providers = await post<Group[]>('/v1/providers', {})
      expect(providers.map((g) => [g.key, g.requests])).toEqual([
        ['openai', 2],
        ['anthropic', 1],
      ])
      expect((await h.request('POST', '/v1/spend/by', { token: org.apiKey, body: { groupBy: 'colour' } })).status).toBe(400)
    })

    test('sessions and users; the Users feature needs the Growth tier', async () => {
      expect((await post<Group[]>('/v1/session/query', {})).map((g) => [g.key, g.requests])).toEqual([['s1', 2]])
      expect((await post<Group[]>('/v1/user/query', {})).map((g) => [g.key, g.cost])).toEqual([
        ['ann', 0.004],
        ['bob', 0.001],
      ])
      expect(await post('/v1/user/metrics-overview/query', {})).toEqual({ users: 2, requestsPerUser: 1.5, costPerUser: 0.0025 })
      const pro = await h.org('pro')
      expect((await h.request('POST', '/v1/user/query', { token: pro.apiKey, body: {} })).status).toBe(403)
    })

    test('property keys without the hidden ones; a property searched and ranked; a hidden property is not found', async () => {
      expect(await post<string[]>('/v1/property/query', {})).toEqual(['customer', 'plan'])
      expect((await post<Group[]>('/v1/property/customer/search', { search: 'glo' })).map((g) => g.key)).toEqual(['globex'])
      expect((await post<Group[]>('/v1/property/customer/top-requests/query', {})).map((g) => g.key)).toEqual(['acme', 'globex'])
      await h.request('POST', '/v1/property/hide', { token: org.ownerSession, body: { key: 'plan' } })
      expect(await post<string[]>('/v1/property/query', {})).toEqual(['customer'])
      expect((await h.request('POST', '/v1/property/plan/top-costs/query', { token: org.apiKey, body: window })).status).toBe(404)
      expect((await h.request('POST', "/v1/property/a'b/search", { token: org.apiKey, body: window })).status).toBe(400)
    })

    test('by country (the trusted proxy reported it, or null); by the values of one property', async () => {
      const countries = await post<Array<{ key: string | null; count: number; cost: number }>>('/v1/metrics/country', {})
      expect(countries.sort((a, b) => String(a.key).localeCompare(String(b.key)))).toEqual([
        { key: 'DE', count: 2, cost: 0.004 },
        { key: null, count: 1, cost: 0.001 },
      ])
      const customers = await post<Group[]>('/v1/metrics/propertyAggregation', { property: 'Customer' })
      expect(customers.map((g) => [g.key, g.requests, g.cost])).toEqual([
        ['acme', 2, 0.004],
        ['globex', 1, 0.001],
      ])
      const missing = await h.request('POST', '/v1/metrics/propertyAggregation', { token: org.apiKey, body: window })
      expect(missing.status).toBe(400)
    })

    test('property keys over time: every bucket, hidden keys left out', async () => {
      const overTime = () =>
        post<Array<{ time: string; values: Record<string, number> }>>('/v1/property/properties/over-time', {
          timeFilter: { start: '2026-11-22T06:00:00Z', end: '2026-11-22T09:59:59Z' },
          dbIncrement: 'hour',
        })
      await h.request('POST', '/v1/property/restore', { token: org.ownerSession, body: { key: 'plan' } })
      expect((await overTime())[0]?.values).toEqual({ customer: 2, plan: 1 })
      await h.request('POST', '/v1/property/hide', { token: org.ownerSession, body: { key: 'plan' } })
      expect(await overTime()).toEqual([
        { time: '2026-11-22T06:00:00.000', values: { customer: 2 } },
        { time: '2026-11-22T07:00:00.000', values: { customer: 0 } },
        { time: '2026-11-22T08:00:00.000', values: { customer: 0 } },
        { time: '2026-11-22T09:00:00.000', values: { customer: 1 } },
      ])
    })
  })
}
