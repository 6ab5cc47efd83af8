import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { RequestRecord } from '../src/store/repositories/requests'
import { createHarness, type Harness, type Org } from './support/harness'
import { requestRecord } from './support/records'

let h: Harness
let org: Org
let other: Org
const id = 'a0000000-0000-4000-8000-000000000001'

const record = (orgId: string, requestId: string): RequestRecord =>
  requestRecord({ id: requestId, orgId, sessionId: 'chat-7', properties: { customer: 'acme' }, createdAt: new Date() })

beforeAll(async () => {
  h = await createHarness()
  org = await h.org('growth')
  other = await h.org('growth')
  await h.store.requests.insertMany([record(org.orgId, id)])
})
afterAll(() => h.close())

const data = async <T>(response: Response) => ((await response.json()) as { data: T }).data

describe('annotating requests', () => {
  test('feedback, named scores (the latest counts), a property', async () => {
    expect(
      await data(await h.request('POST', `/v1/request/${id}/feedback`, { token: org.apiKey, body: { rating: true } })),
    ).toEqual({ requestId: id, rating: 1 })
    await h.request('POST', `/v1/request/${id}/score`, { token: org.apiKey, body: { name: 'helpfulness', value: 3 } })
    const scored = await data<{ scores: Array<{ name: string; value: number }> }>(
      await h.request('POST', `/v1/request/${id}/score`, { token: org.apiKey, body: { name: 'helpfulness', value: 4.5 } }),
    )
    expect(scored.scores).toEqual([{ name: 'helpfulness', value: 4.5 }])
    const set = await data<{ properties: Record<string, string> }>(
      await h.request('PUT', `/v1/request/${id}/property`, { token: org.apiKey, body: { key: 'Reviewed', value: 'yes' } }),
    )
    expect(set.properties).toEqual({ customer: 'acme', reviewed: 'yes' })
    expect((await h.store.requests.get(org.orgId, id))?.properties).toEqual({ customer: 'acme', reviewed: 'yes' })
  })

  test("another organisation's request, or an unknown one: 404, and nothing changes", async () => {
    expect((await h.request('POST', `/v1/request/${id}/feedback`, { token: other.apiKey, body: { rating: false } })).status).toBe(
      404,
    )
    expect(
      (await h.request('PUT', `/v1/request/${id}/property`, { token: other.apiKey, body: { key: 'x', value: 'y' } })).status,
    ).toBe(404)
    expect(
      (await h.request('POST', `/v1/request/${crypto.randomUUID()}/score`, { token: org.apiKey, body: { name: 'n', value: 1 } }))
        .status,
    ).toBe(404)
    expect((await h.store.requests.get(org.orgId, id))?.properties).not.toHaveProperty('x')
  })

  test("bad input: 400, saying what is wrong in the schema's own words where it has them", async () => {
    for (const [path, body, message] of [
      [
        `/v1/request/${id}/feedback`,
        { rating: 5 },
        'invalid body at "rating": rating must be true/false or a number from -1 to 1',
      ],
      [
        `/v1/request/${id}/score`,
        { name: 'bad name', value: 1 },
        'invalid body at "name": name must be 1-64 letters, digits, _, . or -',
      ],
      [`/v1/request/${id}/score`, { name: 'ok', value: 'high' }, 'invalid body at "value": Expected number'],
    ] as const) {
      const response = await h.request('POST', path, { token: org.apiKey, body })
      expect(response.status).toBe(400)
      expect(((await response.json()) as { error: { message: string } }).error.message).toBe(message)
    }
    expect(
      (await h.request('PUT', `/v1/request/${id}/property`, { token: org.apiKey, body: { key: "a'b", value: 'x' } })).status,
    ).toBe(400)
  })
})

describe('annotating sessions', () => {
  test('feedback and tags on a session of the request log; unknown sessions are 404', async () => {
    expect(
      await data(await h.request('POST', '/v1/session/chat-7/feedback', { token: org.apiKey, body: { rating: -1 } })),
    ).toEqual({ sessionId: 'chat-7', rating: -1 })
    await h.request('POST', '/v1/session/chat-7/tag', { token: org.apiKey, body: { tag: 'escalated' } })
    const tagged = await data<{ tags: string[] }>(
      await h.request('POST', '/v1/session/chat-7/tag', { token: org.apiKey, body: { tag: 'billing' } }),
    )
    expect(tagged.tags).toEqual(['billing', 'escalated'])
    expect((await h.request('POST', '/v1/session/chat-7/tag', { token: other.apiKey, body: { tag: 'x' } })).status).toBe(404)
    expect((await h.request('POST', '/v1/session/nope/feedback', { token: org.apiKey, body: { rating: 1 } })).status).toBe(404)
    // What was said is read back; another organisation cannot read it.
    const read = (token: string, session = 'chat-7') => h.request('GET', `/v1/session/${session}/annotations`, { token })
    expect(await data(await read(org.apiKey))).toEqual({ sessionId: 'chat-7', rating: -1, tags: ['billing', 'escalated'] })
    expect((await read(other.apiKey)).status).toBe(404)
    expect((await read(org.apiKey, 'nope')).status).toBe(404)
  })

  test('a key without the traffic.annotate scope is refused, naming it', async () => {
    const created = await h.request('POST', '/v1/api-keys', {
      token: org.ownerSession,
      body: { name: 'reader', scopes: ['traffic.read'] },
    })
    const key = ((await created.json()) as { data: { key: string } }).data.key
    const refused = await h.request('POST', '/v1/session/chat-7/tag', { token: key, body: { tag: 'x' } })
    expect(refused.status).toBe(403)
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('traffic.annotate')
  })
})

describe('scores on the dashboard', () => {
  test('by name: count, average, lowest, highest; verdicts against a threshold', async () => {
    const second = 'a0000000-0000-4000-8000-000000000002'
    await h.store.requests.insertMany([record(org.orgId, second)])
    await h.request('POST', `/v1/request/${id}/score`, { token: org.apiKey, body: { name: 'accuracy', value: 0.9 } })
    await h.request('POST', `/v1/request/${second}/score`, { token: org.apiKey, body: { name: 'accuracy', value: 0.3 } })
    const window = {
      timeFilter: { start: new Date(Date.now() - 3_600_000).toISOString(), end: new Date(Date.now() + 3_600_000).toISOString() },
    }
    const scores = await data<Array<{ name: string; count: number; average: number; min: number; max: number }>>(
      await h.request('POST', '/v1/dashboard/scores/query', { token: org.apiKey, body: window }),
    )
    expect(scores.find((s) => s.name === 'accuracy')).toEqual({ name: 'accuracy', count: 2, average: 0.6, min: 0.3, max: 0.9 })
    const verdicts = await data<Array<{ name: string; passed: number; failed: number }>>(
      await h.request('POST', '/v1/dashboard/verdicts', { token: org.apiKey, body: { ...window, threshold: 0.5 } }),
    )
    expect(verdicts.find((v) => v.name === 'accuracy')).toMatchObject({ passed: 1, failed: 1, passRate: 0.5 })
    const theirs = await data<unknown[]>(
      await h.request('POST', '/v1/dashboard/scores/query', { token: other.apiKey, body: window }),
    )
    expect(theirs).toEqual([])
  })
})
