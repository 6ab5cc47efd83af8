import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import Redis from 'ioredis'
import { type GatewayMeta, MemoryMetaStore, type MetaStore, RedisMetaStore, type StoredMeta } from '../src/gateway/meta/store'
import { CALL_COST_NANO, putLimit } from './support/budgets'
import { type FakeProvider, providersAt, startFakeProvider } from './support/fake-provider'
import { createHarness, DIALECTS, type Harness, type Org } from './support/harness'
import { serviceUrl } from './support/services'

let fake: FakeProvider
let clock = Date.now()
let h: Harness
let a: Org
let b: Org

// The store and the request log's records keep time by the same clock, as they do in gw.
const harness = (meta: MetaStore) =>
  createHarness({
    meta,
    now: () => clock,
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

// What every implementation promises (round trips, ids in any case, owners, lifetimes) is stated once,
// for each of them, in meta-store.contract.test.ts; what follows is the in-process store's own.
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

  test('keeps every field of an entry exactly, whichever are present, though it stores them without their names', async () => {
    const attempt = fc.record(
      {
        provider: fc.string(),
        model: fc.string(),
        httpStatus: fc.integer({ min: 100, max: 599 }),
        error: fc.string(),
        latencyMs: fc.double({ noNaN: true, noDefaultInfinity: true }),
      },
      { requiredKeys: ['provider', 'model', 'latencyMs'] },
    )
    const entry = fc.record({
      orgId: fc.uuid(),
      meta: fc.record(
        {
          requestId: fc.stringMatching(/^[\x21-\x7e]{1,60}$/),
          provider: fc.string(),
          model: fc.string(),
          status: fc.constantFrom('success' as const, 'error' as const),
          requestCost: fc.double({ min: 0, max: 1e6, noNaN: true }),
          estimatedCost: fc.double({ min: 0, max: 1e6, noNaN: true }),
          creditsRemaining: fc.double({ min: -1e6, max: 1e6, noNaN: true }),
          gatewayMode: fc.constantFrom('passthrough' as const, 'translated' as const),
          translationWarning: fc.string(),
          downgradedFrom: fc.string(),
          attempts: fc.array(attempt, { minLength: 1, maxLength: 4 }),
          cached: fc.constant(true as const),
          cacheSavings: fc.double({ min: 0, max: 1e6, noNaN: true }),
        } satisfies { [K in keyof Required<GatewayMeta>]: fc.Arbitrary<Required<GatewayMeta>[K]> },
        { requiredKeys: ['requestId', 'provider', 'model', 'status'] },
      ),
    })
    const store = new MemoryMetaStore(1_000)
    await fc.assert(
      fc.asyncProperty(entry, async (stored) => {
        await store.put(stored, 300)
        // JSON has no -0: a cost of -0 reads back as 0, as it would from Redis.
        expect(await store.get(stored.meta.requestId.toUpperCase())).toEqual(JSON.parse(JSON.stringify(stored)))
      }),
    )
  })

  test('when full, the record closest to lapsing goes first', async () => {
    const store = new MemoryMetaStore(3, () => 0)
    for (const id of ['a', 'b', 'c', 'd']) await store.put({ orgId: 'o', meta: meta(id) }, 300)
    expect(store.size).toBe(3)
    expect(await store.get('a')).toBeUndefined()
    expect((await store.get('d'))?.meta.requestId).toBe('d')
  })

  test('refuses an id it could not keep exactly, and an entry larger than itself', async () => {
    const store = new MemoryMetaStore(10)
    expect(() => store.put({ orgId: 'o', meta: meta('café') }, 300)).toThrow('printable ASCII')
    expect(() => store.put({ orgId: 'o', meta: meta('') }, 300)).toThrow('printable ASCII')
    const huge = { ...meta('big'), translationWarning: 'x'.repeat(70_000) }
    expect(() => store.put({ orgId: 'o', meta: huge }, 300)).toThrow('cannot be stored')
    expect(store.size).toBe(0)
  })

  // 1,000 entries: 320 KB of chunks that the bytes fill first, so writing comes round again and again.
  // 5,000: the store also grows (from room for 1,024 entries) while it does.
  test.each([1_000, 5_000])(
    'holding %i: every lookup answers the latest entry of its id or nothing, and the newest are all there',
    async (bound) => {
      let now = 0
      const store = new MemoryMetaStore(bound, () => now)
      const latest = new Map<string, { orgId: string; meta: ReturnType<typeof meta> & { translationWarning?: string } }>()
      const recent: string[] = []
      const recentIds: string[] = []
      let seed = 7
      const random = () => {
        seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31
        return seed / 2 ** 31
      }
      for (let i = 0; i < 20_000; i++) {
        // Now and then an id comes again, and entries differ in size.
        const id = random() < 0.05 && recent.length > 0 ? (recent[Math.floor(random() * recent.length)] as string) : `req-${i}`
        const entry = { orgId: `org-${i % 7}`, meta: { ...meta(id), translationWarning: 'w'.repeat(Math.floor(random() * 600)) } }
        await store.put(entry, 300)
        latest.set(id, entry)
        recent.push(id)
        recentIds.push(id)
        if (recent.length > 50) recent.shift()
        now += 1
        if (i % 97 === 0) {
          for (const [known, expected] of latest) {
            const found = await store.get(known)
            if (found !== undefined) expect(found).toEqual(expected)
          }
          for (const id of recent) expect(await store.get(id)).toEqual(latest.get(id))
        }
        if (latest.size > 2_000) latest.delete(latest.keys().next().value as string)
      }
      expect(store.size).toBeLessThanOrEqual(bound)
      // What surely fits (entries are at most about 800 bytes; coming round to a chunk drops at most an
      // eighth of the store) is all there at the end.
      const fits = Math.floor((bound * 320 * 0.8) / 800)
      for (const id of recentIds.slice(-fits)) expect(await store.get(id)).toEqual(latest.get(id))
    },
  )
})

/** An in-process store that holds only the latest call, and remembers every entry it was given. */
class ForgetfulMetaStore implements MetaStore {
  readonly given = new Map<string, StoredMeta>()
  private readonly held = new MemoryMetaStore(1)

  put(entry: StoredMeta, ttlSeconds: number): void {
    this.given.set(entry.meta.requestId, structuredClone(entry))
    this.held.put(entry, ttlSeconds)
  }

  get(requestId: string): Promise<StoredMeta | undefined> {
    return this.held.get(requestId)
  }
}

describe.each(DIALECTS)('the lookup of a call the store no longer holds, from its record, on %s', (dialect) => {
  let world: Harness
  let store: ForgetfulMetaStore
  let org: Org
  let other: Org
  beforeAll(async () => {
    store = new ForgetfulMetaStore()
    world = await createHarness({ dialect, meta: store, now: () => clock, providers: providersAt(fake) })
    org = await world.org()
    other = await world.org()
    for (const { orgId } of [org, other]) await world.services.organizations.addCredits(orgId, 10)
  })
  afterAll(() => world.close())

  const lookup = (id: string, token = org.apiKey) => world.request('GET', `/gateway/v1/meta/${id}`, { token })
  /** Calls until one more pushes this one out of the store, and its record is written. */
  const forgotten = async (id: string) => {
    await call(world, other.apiKey)
    await world.requestLog.flush()
    expect(await store.get(id)).toBeUndefined()
  }

  test('answers exactly what the store answered, for every kind of call', async () => {
    // An organisation of its own: its budget must not limit the other tests' calls.
    const spender = await world.org()
    await world.services.organizations.addCredits(spender.orgId, 10)
    const ids: string[] = []
    const send = async (body: Record<string, unknown> = {}, headers: Record<string, string> = {}) => {
      const response = await world.request('POST', '/v1/chat/completions', {
        token: spender.apiKey,
        headers,
        body: { model: 'gpt-4o', max_tokens: 500, messages: [{ role: 'user', content: 'x'.repeat(1_100) }], ...body },
      })
      await response.arrayBuffer()
      ids.push(response.headers.get('gw-id') as string)
      return response
    }
    // Billed to the credits (creditsRemaining), passthrough, one attempt.
    await send()
    // Translated, with what the translation dropped.
    expect((await send({ model: 'claude-sonnet-4-5', seed: 3 })).headers.get('gw-translation-warning')).toBe('dropped: seed')
    // The provider failed, after its retries.
    expect((await send({ messages: [{ role: 'user', content: 'fake:error:500' }] })).status).toBe(500)
    // Answered from the cache: nothing called, a saving.
    const twice = { messages: [{ role: 'user', content: `${'x'.repeat(1_100)} twice` }] }
    await send(twice, { 'Gw-Cache-Enabled': 'true' })
    expect((await send(twice, { 'Gw-Cache-Enabled': 'true' })).headers.get('gw-cache')).toBe('HIT')
    // Served by a cheaper model once a budget's downgrade applied.
    // The calls above spent two to three gpt-4o calls' cost: more than a tenth of a limit of ten.
    await world.requestLog.flush()
    const limit = (10 * CALL_COST_NANO) / 1e9
    await putLimit(world, spender, { scope: { kind: 'org' }, metric: 'usd', limit, window: 'day', action: 'downgrade' })
    const mapping = { fromModel: 'gpt-4o', toModel: 'claude-3-5-haiku', atPercent: 10 }
    expect(
      (await world.request('POST', '/v1/budget/downgrade-mappings', { token: spender.ownerSession, body: mapping })).status,
    ).toBe(201)
    expect((await send()).headers.get('gw-downgraded-from')).toBe('gpt-4o')
    await forgotten(ids.at(-1) as string)

    const given = ids.map((id) => store.given.get(id)?.meta)
    expect(given.map((meta) => meta && Object.keys(meta).sort())).toContainEqual(expect.arrayContaining(['creditsRemaining']))
    for (const field of ['translationWarning', 'cached', 'cacheSavings', 'downgradedFrom'])
      expect(given.some((meta) => meta && field in meta)).toBe(true)
    expect(given.some((meta) => meta?.status === 'error')).toBe(true)
    for (const [i, id] of ids.entries()) {
      const response = await lookup(id, spender.apiKey)
      expect(response.status).toBe(200)
      expect(await response.json()).toEqual(JSON.parse(JSON.stringify(given[i])))
    }
  })

  test("another organisation's call is 404 and shows nothing of it; an unknown id is 202", async () => {
    const id = await call(world, org.apiKey)
    await forgotten(id)
    const response = await lookup(id, other.apiKey)
    expect(response.status).toBe(404)
    expect(await response.text()).not.toContain('gpt-4o')
    expect((await lookup(crypto.randomUUID())).status).toBe(202)
  })

  test('the id is matched whatever its case', async () => {
    const id = await call(world, org.apiKey)
    await forgotten(id)
    expect((await lookup(id.toUpperCase())).status).toBe(200)
  })

  test('it lapses 300 seconds after the call finished, as the store would', async () => {
    const id = await call(world, org.apiKey)
    await forgotten(id)
    clock += 299_000
    expect((await lookup(id)).status).toBe(200)
    clock += 1_001
    expect(await (await lookup(id)).json()).toEqual({ status: 'pending' })
  })
})
