import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { RequestRecord } from '../src/store/repositories/requests'
import { createHarness, type Harness, type Org } from './support/harness'
import { requestRecord } from './support/records'

let h: Harness
let org: Org
let other: Org

const record = (orgId: string, i: number, extra: Partial<RequestRecord> = {}): RequestRecord =>
  requestRecord({
    id: `${orgId.slice(0, 8)}-${String(i).padStart(3, '0')}`,
    orgId,
    userId: i % 2 === 0 ? 'alice' : 'bob',
    properties: { customer: i % 3 === 0 ? 'acme' : 'globex' },
    model: i % 4 === 0 ? 'gpt-4o-mini' : 'gpt-4o',
    status: i % 5 === 0 ? 'error' : 'success',
    latencyMs: 100 + i,
    completionTokens: 5,
    totalTokens: 15,
    costNano: 1_000_000 * i,
    createdAt: new Date(Date.UTC(2026, 0, 1) + i * 60_000),
    ...extra,
  })

beforeAll(async () => {
  h = await createHarness()
  org = await h.org('growth')
  other = await h.org('growth')
  await h.store.requests.insertMany(Array.from({ length: 40 }, (_, i) => record(org.orgId, i)))
  await h.store.requests.insertMany(Array.from({ length: 10 }, (_, i) => record(other.orgId, i)))
  await h.store.requestBodies.insertMany([
    {
      requestId: record(org.orgId, 1).id,
      orgId: org.orgId,
      requestBody: '{"q":1}',
      responseBody: '{"a":1}',
      truncated: false,
      createdAt: new Date(),
    },
  ])
})
afterAll(() => h.close())

type Page = {
  requests: Array<{
    id: string
    model: string
    latencyMs: number
    cost: number
    country: string | null
    body?: { request: string }
  }>
  offset: number
  limit: number
  nextCursor: string | null
}
const query = async (body: unknown, token = org.apiKey, path = '/v1/request/query') => h.request('POST', path, { token, body })
const page = async (body: unknown, path?: string) => ((await (await query(body, org.apiKey, path)).json()) as { data: Page }).data

describe('POST /v1/request/query', () => {
  test("filters, newest first, pages with offset and limit, only the caller's organisation", async () => {
    const first = await page({ filter: { request: { model: { equals: 'gpt-4o-mini' } } }, limit: 4 })
    expect(first.requests.map((r) => r.model)).toEqual(['gpt-4o-mini', 'gpt-4o-mini', 'gpt-4o-mini', 'gpt-4o-mini'])
    expect(first.requests[0]?.id).toBe(record(org.orgId, 36).id)
    const second = await page({ filter: { request: { model: { equals: 'gpt-4o-mini' } } }, limit: 4, offset: 4 })
    expect(second.requests.map((r) => r.id)).toEqual([20, 16, 12, 8].map((i) => record(org.orgId, i).id))
    const all = await page({ limit: 1000 })
    expect(all.requests.length).toBe(40)
  })

  test('sorts by latency or cost; costs in USD', async () => {
    const cheapest = await page({ sort: { cost: 'asc' }, limit: 2 })
    expect(cheapest.requests.map((r) => r.cost)).toEqual([0, 0.001])
    const slowest = await page({ sort: { latency_ms: 'desc' }, limit: 1 })
    expect(slowest.requests[0]?.latencyMs).toBe(139)
  })

  test('properties, branches and time filters', async () => {
    const filter = {
      operator: 'and',
      left: { request: { properties: { customer: { equals: 'acme' } } } },
      right: { request: { created_at: { gte: new Date(Date.UTC(2026, 0, 1) + 30 * 60_000).toISOString() } } },
    }
    expect((await page({ filter })).requests.map((r) => r.id).sort()).toEqual(
      [30, 33, 36, 39].map((i) => record(org.orgId, i).id),
    )
  })

  test('bodies only when asked', async () => {
    const ids = { filter: { request: { request_id: { equals: record(org.orgId, 1).id } } } }
    expect((await page(ids)).requests[0]?.body).toBeUndefined()
    expect((await page({ ...ids, includeBodies: true })).requests[0]?.body?.request).toBe('{"q":1}')
  })

  test('bad input: 400 naming it', async () => {
    const cases: Array<[unknown, string]> = [
      [{ filter: { request: { colour: { equals: 'red' } } } }, 'unknown field "colour"'],
      [{ filter: { request: { model: { gt: 1 } } } }, 'operator "gt"'],
      [{ limit: 5000 }, 'limit'],
      [{ sort: { model: 'asc' } }, 'sort'],
      [{ offset: -1 }, 'offset'],
    ]
    for (const [body, message] of cases) {
      const response = await query(body)
      expect(response.status).toBe(400)
      expect(((await response.json()) as { error: { message: string } }).error.message).toContain(message)
    }
  })
})

describe('cursor paging (bulk export)', () => {
  const walk = async (direction: 'asc' | 'desc', limit: number) => {
    const seen: string[] = []
    let cursor: string | undefined
    for (let pages = 0; pages < 100; pages++) {
      const next = await page(
        { limit, sort: { created_at: direction }, ...(cursor ? { cursor } : {}) },
        '/v1/request/query-clickhouse',
      )
      seen.push(...next.requests.map((r) => r.id))
      if (!next.nextCursor) return seen
      cursor = next.nextCursor
    }
    throw new Error('cursor paging did not end')
  }

  test('walks every request once, in order, both directions; the last page has no cursor', async () => {
    const newestFirst = Array.from({ length: 40 }, (_, i) => record(org.orgId, 39 - i).id)
    expect(await walk('desc', 7)).toEqual(newestFirst)
    expect(await walk('asc', 8)).toEqual([...newestFirst].reverse())
  })

  test('ties on created_at are ordered by id, so a page boundary inside them loses nothing', async () => {
    const tied = await createHarness({ database: h })
    const same = new Date(Date.UTC(2025, 5, 1))
    const ids = ['t1', 't2', 't3', 't4', 't5']
    const tiedOrg = await tied.org('growth')
    await tied.store.requests.insertMany(ids.map((id) => record(tiedOrg.orgId, 0, { id, createdAt: same })))
    const seen: string[] = []
    let cursor: string | undefined
    do {
      const response = await tied.request('POST', '/v1/request/query-clickhouse', {
        token: tiedOrg.apiKey,
        body: { limit: 2, ...(cursor ? { cursor } : {}) },
      })
      const next = ((await response.json()) as { data: Page }).data
      seen.push(...next.requests.map((r) => r.id))
      cursor = next.nextCursor ?? undefined
    } while (cursor)
    expect(seen).toEqual([...ids].reverse())
    await tied.close()
  })

  test('a cursor is refused with offset, with another sort, or when it is not ours', async () => {
    const first = await page({ limit: 5 }, '/v1/request/query-clickhouse')
    const cursor = first.nextCursor as string
    const cases: Array<[unknown, string]> = [
      [{ cursor, offset: 5 }, 'either cursor or offset'],
      [{ cursor, sort: { cost: 'desc' } }, 'sort by created_at'],
      [{ cursor, sort: { created_at: 'asc' } }, 'other sort direction'],
      [{ cursor: 'bm90IGEgY3Vyc29y' }, 'not one this API gave out'],
    ]
    for (const [body, message] of cases) {
      const response = await query(body, org.apiKey, '/v1/request/query-clickhouse')
      expect(response.status).toBe(400)
      expect(((await response.json()) as { error: { message: string } }).error.message).toContain(message)
    }
  })

  test("another organisation's cursor only moves within the caller's own requests", async () => {
    const theirs = await (await query({ limit: 2 }, other.apiKey, '/v1/request/query-clickhouse')).json()
    const cursor = (theirs as { data: Page }).data.nextCursor as string
    const mine = await page({ cursor, limit: 1000 }, '/v1/request/query-clickhouse')
    expect(mine.requests.every((r) => r.id.startsWith(org.orgId.slice(0, 8)))).toBe(true)
  })
})

describe('the other request routes', () => {
  test('count', async () => {
    const response = await h.request('POST', '/v1/request/count/query', {
      token: org.apiKey,
      body: { filter: { request: { status: { equals: 'error' } } } },
    })
    expect(((await response.json()) as { data: { count: number } }).data.count).toBe(8)
  })

  test("query-ids returns only the caller's own", async () => {
    const ids = [record(org.orgId, 3).id, record(other.orgId, 3).id]
    const response = await h.request('POST', '/v1/request/query-ids', { token: org.apiKey, body: { requestIds: ids } })
    expect(((await response.json()) as { data: Page }).data.requests.map((r) => r.id)).toEqual([record(org.orgId, 3).id])
  })

  test("query-ids with annotations: each request's rating, scores and security flags, none of another organisation's", async () => {
    const rated = record(org.orgId, 6).id
    const plain = record(org.orgId, 7).id
    const token = org.ownerSession
    expect((await h.request('POST', `/v1/request/${rated}/feedback`, { token, body: { rating: false } })).status).toBe(200)
    for (const [name, value] of [
      ['relevance', 0.8],
      ['accuracy', 0.5],
    ] as const)
      expect((await h.request('POST', `/v1/request/${rated}/score`, { token, body: { name, value } })).status).toBe(200)
    const createdAt = new Date()
    await h.store.requestFlags.insertMany([
      { requestId: rated, orgId: org.orgId, kind: 'pii', category: 'email', occurrences: 2, createdAt },
      { requestId: rated, orgId: other.orgId, kind: 'injection', category: 'ignore-previous', occurrences: 1, createdAt },
    ])
    const response = await h.request('POST', '/v1/request/query-ids', {
      token: org.apiKey,
      body: { requestIds: [rated, plain], includeAnnotations: true },
    })
    const { requests } = ((await response.json()) as { data: { requests: Array<{ id: string; annotations: unknown }> } }).data
    expect(Object.fromEntries(requests.map((r) => [r.id, r.annotations]))).toEqual({
      [rated]: {
        rating: 0,
        scores: [
          { name: 'accuracy', value: 0.5 },
          { name: 'relevance', value: 0.8 },
        ],
        flags: [{ kind: 'pii', category: 'email', occurrences: 2 }],
      },
      [plain]: { rating: null, scores: [], flags: [] },
    })
    const bad = await h.request('POST', '/v1/request/query-ids', {
      token: org.apiKey,
      body: { requestIds: [rated], includeAnnotations: 'yes' },
    })
    expect(bad.status).toBe(400)
    const without = await h.request('POST', '/v1/request/query-ids', { token: org.apiKey, body: { requestIds: [rated] } })
    expect(((await without.json()) as { data: { requests: object[] } }).data.requests[0]).not.toHaveProperty('annotations')
  })

  test('query-clickhouse: the request_response_rmt wrapper and larger pages', async () => {
    const body = { filter: { request_response_rmt: { model: { equals: 'gpt-4o' } } }, limit: 5000 }
    expect((await page(body, '/v1/request/query-clickhouse')).requests.length).toBe(30)
    expect(
      (await query({ filter: { request: { model: { equals: 'gpt-4o' } } } }, org.apiKey, '/v1/request/query-clickhouse')).status,
    ).toBe(400)
  })

  test("assets: not stored, so not found; another organisation's request likewise", async () => {
    expect((await h.request('POST', `/v1/request/${record(org.orgId, 1).id}/assets/image-1`, { token: org.apiKey })).status).toBe(
      404,
    )
  })
})

describe('the Users feature (spec 4.5)', () => {
  test('filtering by user needs the Growth tier', async () => {
    const pro = await h.org('pro')
    const response = await query({ filter: { request: { user_id: { equals: 'alice' } } } }, pro.apiKey)
    expect(response.status).toBe(403)
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('tier_required')
    expect((await page({ filter: { request: { user_id: { equals: 'alice' } } }, limit: 1000 })).requests.length).toBe(20)
  })

  test('a deployment can switch it off', async () => {
    const off = await createHarness({ database: h, usersFeature: false })
    const response = await off.request('POST', '/v1/request/query', {
      token: org.apiKey,
      body: { filter: { request: { user_id: { equals: 'alice' } } } },
    })
    expect(response.status).toBe(403)
    expect((await off.request('POST', '/v1/request/query', { token: org.apiKey, body: {} })).status).toBe(200)
    await off.close()
  })
})
