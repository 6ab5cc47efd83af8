import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import Redis from 'ioredis'
import { MemoryMetaStore, type MetaStore, RedisMetaStore } from '../src/gateway/meta/store'
import { type FakeProvider, providersAt, startFakeProvider } from './support/fake-provider'
import { createHarness, type Harness, type Org } from './support/harness'
import { serviceUrl } from './support/services'

let fake: FakeProvider
let clock = Date.now()
let h: Harness
let a: Org
let b: Org

const harness = (meta: MetaStore) =>
  createHarness({
    meta,
    providers: providersAt(fake),
  })

beforeAll(async () => {
  fake = await startFakeProvider()
  h = await harness(new MemoryMetaStore(1_000, () => clock))
  a = await h.org()
  b = await h.org()
  await h.services.organizations.addCredits(a.orgId, 10)
})
afterAll(async () => {
  await h.close()
  await fake.close()
})

const call = async (target: Harness, token: string) => {
  const response = await target.request('POST', '/v1/chat/completions', {
    token,
    body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] },
  })
  expect(response.status).toBe(200)
  return response.headers.get('gw-id') as string
}

describe('GET /gateway/v1/meta/{requestId} (spec 4.2)', () => {
  test("200 with GatewayMeta for the caller's own request", async () => {
    const id = await call(h, a.apiKey)
    const response = await h.request('GET', `/gateway/v1/meta/${id}`, { token: a.apiKey })
    expect(response.status).toBe(200)
    const meta = (await response.json()) as Record<string, unknown>
    expect(meta).toMatchObject({
      requestId: id,
      provider: 'openai',
      model: 'gpt-4o',
      status: 'success',
      gatewayMode: 'passthrough',
    })
    expect(typeof meta.requestCost).toBe('number')
    expect(typeof meta.estimatedCost).toBe('number')
    expect(typeof meta.creditsRemaining).toBe('number')
  })

  test('the id is matched whatever its case', async () => {
    const id = await call(h, a.apiKey)
    expect((await h.request('GET', `/gateway/v1/meta/${id.toUpperCase()}`, { token: a.apiKey })).status).toBe(200)
  })

  test('202 pending when no record exists for the id', async () => {
    const response = await h.request('GET', `/gateway/v1/meta/${crypto.randomUUID()}`, { token: a.apiKey })
    expect(response.status).toBe(202)
    expect(await response.json()).toEqual({ status: 'pending' })
  })

  test("404 for another organisation's request, never 403 and never its data", async () => {
    const id = await call(h, a.apiKey)
    const response = await h.request('GET', `/gateway/v1/meta/${id}`, { token: b.apiKey })
    expect(response.status).toBe(404)
    expect(await response.text()).not.toContain('gpt-4o')
  })

  for (const bad of [
    'not-a-uuid',
    '123e4567-e89b-12d3-a456-426614174000',
    '123e4567-e89b-42d3-c456-426614174000',
    '123e4567e89b42d3a456426614174000',
  ]) {
    test(`400 for ${bad}, which is not a UUID v4`, async () => {
      expect((await h.request('GET', `/gateway/v1/meta/${bad}`, { token: a.apiKey })).status).toBe(400)
    })
  }

  test('a record lapses after 300 seconds: then 202', async () => {
    const id = await call(h, a.apiKey)
    clock += 299_000
    expect((await h.request('GET', `/gateway/v1/meta/${id}`, { token: a.apiKey })).status).toBe(200)
    clock += 1_001
    expect((await h.request('GET', `/gateway/v1/meta/${id}`, { token: a.apiKey })).status).toBe(202)
  })

  test('without credentials: 401', async () => {
    expect((await h.request('GET', `/gateway/v1/meta/${crypto.randomUUID()}`)).status).toBe(401)
  })
})

const redisUrl = serviceUrl('GW_TEST_REDIS_URL')
describe.skipIf(!redisUrl)('metadata shared through Redis (CI requires it)', () => {
  test('instance B answers for a request served by instance A', async () => {
    const prefix = `gw:test:${crypto.randomUUID()}:`
    const clients = [new Redis(redisUrl as string), new Redis(redisUrl as string)]
    const first = await harness(new RedisMetaStore(clients[0] as Redis, prefix))
    try {
      const org = await first.org()
      await first.services.organizations.addCredits(org.orgId, 1)
      // Instance B shares the database and Redis with A, as instances behind one load balancer do; not its memory.
      const second = await createHarness({ database: first, meta: new RedisMetaStore(clients[1] as Redis, prefix) })
      const id = await call(first, org.apiKey)
      const response = await second.request('GET', `/gateway/v1/meta/${id}`, { token: org.apiKey })
      expect(response.status).toBe(200)
      expect(((await response.json()) as { requestId: string }).requestId).toBe(id)
      const other = await second.org()
      expect((await second.request('GET', `/gateway/v1/meta/${id}`, { token: other.apiKey })).status).toBe(404)
      await second.close()
    } finally {
      await first.close()
      for (const client of clients) client.disconnect()
    }
  })
})

describe('the in-process metadata store', () => {
  const meta = (requestId: string) => ({ requestId, provider: 'openai', model: 'gpt-4o', status: 'success' as const })

  test('drops lapsed records as new ones come, so it holds what the last 300 seconds left', async () => {
    let now = 0
    const store = new MemoryMetaStore(1_000, () => now)
    for (let i = 0; i < 100; i++) await store.put({ orgId: 'o', meta: meta(`r${i}`) }, 300)
    now = 301_000
    await store.put({ orgId: 'o', meta: meta('late') }, 300)
    expect(store.size).toBe(1)
    expect(await store.get('late')).toEqual({ orgId: 'o', meta: meta('late') })
  })

  test('when full, the record closest to lapsing goes first', async () => {
    const store = new MemoryMetaStore(3, () => 0)
    for (const id of ['a', 'b', 'c', 'd']) await store.put({ orgId: 'o', meta: meta(id) }, 300)
    expect(store.size).toBe(3)
    expect(await store.get('a')).toBeUndefined()
    expect((await store.get('d'))?.meta.requestId).toBe('d')
  })
})
