import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import Redis from 'ioredis'
import { FailoverLimiterStore } from '../src/limits/failover-store'
import { RedisLimiterStore } from '../src/limits/redis-store'
import { type Check, MemoryLimiterStore } from '../src/limits/store'
import { CircuitBreaker } from '../src/util/breaker'
import { type FakeProvider, providersAt, startFakeProvider } from './support/fake-provider'
import { createHarness, type Harness, type Org } from './support/harness'
import { startOwnRedis } from './support/redis-server'
import { serviceUrl } from './support/services'

let fake: FakeProvider
beforeAll(async () => {
  fake = await startFakeProvider()
})
afterAll(() => fake.close())

const chat = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }
const send = (
  h: Harness,
  token: string,
  headers: Record<string, string> = {},
  path = '/v1/chat/completions',
  body: unknown = chat,
) => h.request('POST', path, { token, body, headers })

async function fundedOrg(h: Harness, tier: 'free' | 'growth' = 'growth'): Promise<Org> {
  const org = await h.org(tier)
  await h.services.organizations.addCredits(org.orgId, 1_000)
  return org
}

describe('layer 1: the global sliding window', () => {
  let h: Harness
  beforeAll(async () => {
    h = await createHarness({ providers: providersAt(fake), globalRateLimit: { requests: 3, windowSeconds: 60 } })
  })
  afterAll(() => h.close())

  test('per organisation: the 3rd request passes, the 4th gets 429 with Retry-After and the rate-limit headers', async () => {
    const org = await fundedOrg(h)
    for (let i = 0; i < 3; i++) expect((await send(h, org.apiKey)).status).toBe(200)
    const limited = await send(h, org.apiKey)
    expect(limited.status).toBe(429)
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(limited.headers.get('gw-ratelimit-limit')).toBe('3')
    expect(limited.headers.get('gw-ratelimit-remaining')).toBe('0')
    expect(limited.headers.get('gw-ratelimit-policy')).toBe('3;w=60;u=request;s=global')
    expect(limited.headers.get('gw-status')).toBe('error')
    const body = (await limited.json()) as { error: { type: string; message: string } }
    expect(body.error.type).toBe('rate_limit_error')
    expect(body.error.message).toContain('3 requests per 60 s')
    // Another organisation is not affected.
    expect((await send(h, (await fundedOrg(h)).apiKey)).status).toBe(200)
  })

  test('a passing response carries the headers too', async () => {
    const org = await fundedOrg(h)
    const ok = await send(h, org.apiKey)
    expect(ok.headers.get('gw-ratelimit-limit')).toBe('3')
    expect(ok.headers.get('gw-ratelimit-remaining')).toBe('2')
  })

  test('a limited request is recorded as an error with reason rate_limited, and reaches no provider', async () => {
    const org = await fundedOrg(h)
    for (let i = 0; i < 3; i++) await send(h, org.apiKey)
    const before = fake.calls.length
    const limited = await send(h, org.apiKey)
    expect(fake.calls.length).toBe(before)
    await h.requestLog.flush()
    const row = await h.store.requests.get(org.orgId, limited.headers.get('gw-id') as string)
    expect(row).toMatchObject({ status: 'error', httpStatus: 429, costNano: null, costNote: 'not dispatched' })
    expect(row?.error).toStartWith('rate_limited: ')
  })

  test("the 429 body is in the caller's format on /v1/messages", async () => {
    const org = await fundedOrg(h)
    const body = { model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }
    for (let i = 0; i < 3; i++) await send(h, org.apiKey, {}, '/v1/messages', body)
    const limited = await send(h, org.apiKey, {}, '/v1/messages', body)
    expect(limited.status).toBe(429)
    expect(await limited.json()).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } })
  })
})

describe('layer 2: token buckets from the policy header', () => {
  let h: Harness
  let org: Org
  beforeAll(async () => {
    h = await createHarness({ providers: providersAt(fake) })
    org = await fundedOrg(h, 'free')
  })
  afterAll(() => h.close())

  test('per user: each user has their own bucket', async () => {
    const policy = { 'Gw-RateLimit-Policy': '2;w=3600;u=request;s=user' }
    for (let i = 0; i < 2; i++) expect((await send(h, org.apiKey, { ...policy, 'Gw-User-Id': 'ann' })).status).toBe(200)
    const limited = await send(h, org.apiKey, { ...policy, 'Gw-User-Id': 'ann' })
    expect(limited.status).toBe(429)
    expect(limited.headers.get('gw-ratelimit-policy')).toBe('2;w=3600;u=request;s=user')
    expect(Number(limited.headers.get('retry-after'))).toBe(1800)
    expect((await send(h, org.apiKey, { ...policy, 'Gw-User-Id': 'bob' })).status).toBe(200)
  })

  test('per property value, named by p=', async () => {
    const policy = { 'Gw-RateLimit-Policy': '1;s=prop;p=customer' }
    expect((await send(h, org.apiKey, { ...policy, 'Gw-Property-Customer': 'acme' })).status).toBe(200)
    expect((await send(h, org.apiKey, { ...policy, 'Gw-Property-Customer': 'acme' })).status).toBe(429)
    expect((await send(h, org.apiKey, { ...policy, 'Gw-Property-Customer': 'globex' })).status).toBe(200)
  })

  test('per model: each model has its own bucket', async () => {
    const policy = { 'Gw-RateLimit-Policy': '1;s=model' }
    expect((await send(h, org.apiKey, policy)).status).toBe(200)
    expect((await send(h, org.apiKey, policy)).status).toBe(429)
    expect((await send(h, org.apiKey, policy, '/v1/chat/completions', { ...chat, model: 'gpt-4o-mini' })).status).toBe(200)
  })

  test('a malformed policy, or a segment without its value: 400 naming the bad part, no provider call', async () => {
    const before = fake.calls.length
    const malformed = await send(h, org.apiKey, { 'Gw-RateLimit-Policy': '10;u=tokens' })
    expect(malformed.status).toBe(400)
    expect(((await malformed.json()) as { error: { message: string } }).error.message).toContain(
      'u (unit) must be request or cents',
    )
    const noUser = await send(h, org.apiKey, { 'Gw-RateLimit-Policy': '10;s=user' })
    expect(noUser.status).toBe(400)
    expect(((await noUser.json()) as { error: { message: string } }).error.message).toContain('Gw-User-Id')
    expect(fake.calls.length).toBe(before)
  })

  test('cents: the estimate must be covered before, the real cost is taken after', async () => {
    const other = await fundedOrg(h, 'free')
    // gpt-4o costs 0.75 cents per call here (the fake's usage): a 1-cent bucket passes the first call
    // (1 cent left), the second (0.25 left, then -0.5 once charged), and refuses the third.
    const policy = { 'Gw-RateLimit-Policy': '1;w=3600;u=cents' }
    const small = { ...chat, max_tokens: 10 }
    expect((await send(h, other.apiKey, policy, '/v1/chat/completions', small)).status).toBe(200)
    expect((await send(h, other.apiKey, policy, '/v1/chat/completions', small)).status).toBe(200)
    const third = await send(h, other.apiKey, policy, '/v1/chat/completions', small)
    expect(third.status).toBe(429)
    expect(third.headers.get('gw-ratelimit-remaining')).toBe('0')
    // An estimate bigger than the whole bucket is refused before the call.
    const greedy = await send(h, (await fundedOrg(h, 'free')).apiKey, policy, '/v1/chat/completions', chat)
    expect(greedy.status).toBe(429)
  })
})

describe('organisation rules (POST/PUT/DELETE /v1/rate-limits)', () => {
  let h: Harness
  beforeAll(async () => {
    h = await createHarness({ providers: providersAt(fake) })
  })
  afterAll(() => h.close())

  test('need the Growth tier: 403 tier_required below it', async () => {
    const org = await h.org('pro')
    const response = await h.request('POST', '/v1/rate-limits', { token: org.ownerSession, body: { quota: 5 } })
    expect(response.status).toBe(403)
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('tier_required')
  })

  test('a Member key cannot configure them: 403', async () => {
    const org = await h.org('growth')
    expect((await h.request('POST', '/v1/rate-limits', { token: org.apiKey, body: { quota: 5 } })).status).toBe(403)
  })

  test('create, list, replace, delete; the gateway applies a change within one second', async () => {
    const org = await fundedOrg(h)
    const created = await h.request('POST', '/v1/rate-limits', { token: org.ownerSession, body: { quota: 1, windowSeconds: 60 } })
    expect(created.status).toBe(201)
    const rule = ((await created.json()) as { data: { id: string; policy: string } }).data
    expect(rule.policy).toBe('1;w=60;u=request;s=global')
    const listed = (await (await h.request('GET', '/v1/rate-limits', { token: org.apiKey })).json()) as {
      data: Array<{ id: string }>
    }
    expect(listed.data.map((r) => r.id)).toEqual([rule.id])

    expect((await send(h, org.apiKey)).status).toBe(200)
    expect((await send(h, org.apiKey)).status).toBe(429)
    // The header overrides the organisation's rules for that request.
    expect((await send(h, org.apiKey, { 'Gw-RateLimit-Policy': '100' })).status).toBe(200)

    const replaced = await h.request('PUT', `/v1/rate-limits/${rule.id}`, {
      token: org.ownerSession,
      body: { quota: 50, windowSeconds: 60 },
    })
    expect(((await replaced.json()) as { data: { policy: string } }).data.policy).toBe('50;w=60;u=request;s=global')
    expect((await send(h, org.apiKey)).status).toBe(200)

    expect((await h.request('DELETE', `/v1/rate-limits/${rule.id}`, { token: org.ownerSession })).status).toBe(200)
    expect(
      ((await (await h.request('GET', '/v1/rate-limits', { token: org.apiKey })).json()) as { data: unknown[] }).data,
    ).toEqual([])
    const audit = (await h.store.org(org.orgId).audit.list()).map((e) => e.action)
    expect(audit).toEqual(
      expect.arrayContaining(['POST /v1/rate-limits', 'PUT /v1/rate-limits/:ruleId', 'DELETE /v1/rate-limits/:ruleId']),
    )
  })

  test('another instance applies a change within one second', async () => {
    let clock = Date.now()
    const first = await createHarness({ providers: providersAt(fake), now: () => clock })
    const second = await createHarness({ database: first, providers: providersAt(fake), now: () => clock })
    const org = await fundedOrg(first)
    expect((await send(second, org.apiKey)).status).toBe(200) // the second instance has read "no rules"
    await first.request('POST', '/v1/rate-limits', { token: org.ownerSession, body: { quota: 1, windowSeconds: 60 } })
    expect((await send(first, org.apiKey)).status).toBe(200)
    expect((await send(first, org.apiKey)).status).toBe(429)
    clock += 1_001
    expect((await send(second, org.apiKey)).status).toBe(200)
    expect((await send(second, org.apiKey)).status).toBe(429)
    await second.close()
    await first.close()
  })

  test('bad input: 400 naming the problem, nothing stored', async () => {
    const org = await h.org('growth')
    for (const body of [
      { quota: 0 },
      { quota: 1.5 },
      { quota: 5, segment: 'prop' },
      { quota: 5, unit: 'tokens' },
      { quota: 5, extra: 1 },
    ]) {
      const response = await h.request('POST', '/v1/rate-limits', { token: org.ownerSession, body })
      expect(response.status).toBe(400)
    }
    expect(await h.store.org(org.orgId).rateLimitRules.list()).toEqual([])
  })

  test("another organisation's rule: 404 on replace and delete, and it is left alone", async () => {
    const a = await h.org('growth')
    const b = await h.org('growth')
    const rule = (
      (await (await h.request('POST', '/v1/rate-limits', { token: a.ownerSession, body: { quota: 5 } })).json()) as {
        data: { id: string }
      }
    ).data
    expect((await h.request('PUT', `/v1/rate-limits/${rule.id}`, { token: b.ownerSession, body: { quota: 1 } })).status).toBe(404)
    expect((await h.request('DELETE', `/v1/rate-limits/${rule.id}`, { token: b.ownerSession })).status).toBe(404)
    expect((await h.store.org(a.orgId).rateLimitRules.get(rule.id))?.quota).toBe(5)
  })
})

const bucket = (key: string, limit: number): Check => ({ kind: 'bucket', key, limit, windowMs: 3_600_000, need: 1, take: 1 })

// The same against each store on its own (in process, Redis) is in limiter-store.contract.test.ts.
describe('200 concurrent requests against a quota of 50', () => {
  test('through the gateway: exactly 50 pass', async () => {
    const h = await createHarness({ providers: providersAt(fake) })
    const org = await fundedOrg(h)
    const statuses = await Promise.all(
      Array.from({ length: 200 }, () => send(h, org.apiKey, { 'Gw-RateLimit-Policy': '50' }).then((r) => r.status)),
    )
    expect(statuses.filter((s) => s === 200).length).toBe(50)
    expect(statuses.filter((s) => s === 429).length).toBe(150)
    await h.close()
  })
})

const redisUrl = serviceUrl('GW_TEST_REDIS_URL')
describe.skipIf(!redisUrl)('on Redis (CI requires it)', () => {
  const clients: Redis[] = []
  const client = () => {
    const c = new Redis(redisUrl as string)
    clients.push(c)
    return c
  }
  afterAll(() => {
    for (const c of clients) c.disconnect()
  })

  test('two app instances sharing Redis enforce one limit', async () => {
    const first = await createHarness({ providers: providersAt(fake), limiterStore: new RedisLimiterStore(client()) })
    const second = await createHarness({
      database: first,
      providers: providersAt(fake),
      limiterStore: new RedisLimiterStore(client()),
    })
    const org = await fundedOrg(first)
    const policy = { 'Gw-RateLimit-Policy': '4;w=3600' }
    const statuses = await Promise.all(
      Array.from({ length: 10 }, (_, i) => send(i % 2 === 0 ? first : second, org.apiKey, policy).then((r) => r.status)),
    )
    expect(statuses.filter((s) => s === 200).length).toBe(4)
    await second.close()
    await first.close()
  })
})

describe.skipIf(!Bun.which('redis-server'))('Redis stopped mid-run', () => {
  // Starting a redis-server twice on a machine busy with the rest of the suite may take seconds each.
  test('limits still hold on each instance, and Redis is used again once it is back', async () => {
    const own = await startOwnRedis()
    const redis = new Redis({
      port: own.port,
      host: '127.0.0.1',
      maxRetriesPerRequest: 1,
      commandTimeout: 500,
      retryStrategy: () => 50,
    })
    // The outage is the point of this test; its connection errors are expected, not news.
    redis.on('error', () => undefined)
    try {
      for (let i = 0; i < 250 && redis.status !== 'ready'; i++) await Bun.sleep(20)
      const primary = new RedisLimiterStore(redis)
      let clock = 0
      const store = new FailoverLimiterStore(
        primary,
        new MemoryLimiterStore(),
        new CircuitBreaker({ cooldownMs: 1_000, now: () => clock }),
      )
      const check = [bucket('gw:rl:{outage}:b', 3)]
      expect((await store.decide(check))[0]?.allowed).toBe(true)
      expect(store.degraded).toBe(false)

      await own.kill()
      // Redis is gone: the in-process store enforces the same quota on its own (never fail-open).
      const during = await Promise.all(Array.from({ length: 5 }, () => store.decide(check)))
      expect(store.degraded).toBe(true)
      expect(during.filter(([d]) => d?.allowed).length).toBe(3)

      await own.restart()
      for (let i = 0; i < 250 && redis.status !== 'ready'; i++) await Bun.sleep(20)
      clock += 1_001
      // Back on Redis, whose (new, empty) state is authoritative again.
      expect((await store.decide(check))[0]?.allowed).toBe(true)
      expect(store.degraded).toBe(false)
      expect(await redis.exists('gw:rl:{outage}:b')).toBe(1)
    } finally {
      redis.disconnect()
      await own.stop()
    }
  }, 30_000)
})
