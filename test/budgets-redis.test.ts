import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import Redis from 'ioredis'
import { EgressPolicy, parseAllowList } from '../src/egress/policy'
import { silentLogger } from '../src/log'
import { openRedisStores, REDIS_BREAKER_COOLDOWN_MS, type RedisStores } from '../src/runtime'
import { RedisSpendStore } from '../src/spend/redis-counters'
import { CALL_COST_NANO, chat, data, logged, putLimit } from './support/budgets'
import { type FakeProvider, providersAt, startFakeProvider } from './support/fake-provider'
import { createHarness, type Harness } from './support/harness'
import { type OwnRedis, startOwnRedis } from './support/redis-server'
import { serviceUrl } from './support/services'

/**
 * Budgets shared through Redis by several instances, and through a Redis outage. The shared Redis
 * (GW_TEST_REDIS_URL, always in CI) holds the counters of two harnesses over one database, as two gw
 * instances behind a load balancer; the outage test runs a redis-server of its own and kills it.
 */

const redisUrl = serviceUrl('GW_TEST_REDIS_URL')
const ownRedisRunnable = Bun.which('redis-server') !== null || process.env.GW_TEST_REQUIRE_SERVICES === '1'
const LOOPBACK = parseAllowList('127.0.0.1') as NonNullable<ReturnType<typeof parseAllowList>>

let fake: FakeProvider
const harnesses: Harness[] = []
const clients: Redis[] = []
beforeAll(async () => {
  fake = await startFakeProvider()
})
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.close()
})
afterAll(async () => {
  for (const client of clients) client.disconnect()
  fake.close()
})

/** Two instances over one database, their budgets counted in one Redis. */
async function twoInstances() {
  const client = new Redis(redisUrl as string)
  clients.push(client)
  const options = { providers: providersAt(fake), egress: new EgressPolicy({ enabled: true, allow: LOOPBACK }) }
  const a = await createHarness({ ...options, spendStore: new RedisSpendStore(client) })
  const b = await createHarness({ ...options, spendStore: new RedisSpendStore(client), database: a })
  harnesses.push(b, a)
  const org = await a.org('growth')
  await a.services.organizations.addCredits(org.orgId, 100)
  return { a, b, org }
}

describe.skipIf(!redisUrl)('budgets on Redis, shared by two instances', () => {
  test('200 concurrent calls across both against a limit worth about 20: what was spent never exceeds it', async () => {
    const { a, b, org } = await twoInstances()
    const limitNano = 20 * CALL_COST_NANO
    await putLimit(a, org, { scope: { kind: 'org' }, metric: 'usd', limit: limitNano / 1e9, window: 'day' })
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => chat(i % 2 === 0 ? a : b, org.apiKey)))
    expect(answers.every((r) => r.status === 200 || r.status === 429)).toBe(true)
    const refused = answers.filter((r) => r.status === 429)
    expect(refused.length).toBeGreaterThan(100)
    expect(Number(refused[0]?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    await b.requestLog.flush()
    expect((await logged(a, org.orgId)).usd).toBeLessThanOrEqual(limitNano)

    // One by one, alternating, until refused: within one call's worst case of the limit.
    for (let i = 0; i < 40; i++) if ((await chat(i % 2 === 0 ? b : a, org.apiKey)).status === 429) break
    await b.requestLog.flush()
    const spent = (await logged(a, org.orgId)).usd
    expect(spent).toBeLessThanOrEqual(limitNano)
    expect(limitNano - spent).toBeLessThan(2 * CALL_COST_NANO)
  })

  test.each([
    ['tokens', 8 * 1_500],
    ['requests', 8],
  ] as const)('a limit on %s holds across both instances', async (metric, limit) => {
    const { a, b, org } = await twoInstances()
    await putLimit(a, org, { scope: { kind: 'org' }, metric, limit, window: 'week' })
    const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => chat(i % 2 === 0 ? a : b, org.apiKey)))
    await b.requestLog.flush()
    const spent = await logged(a, org.orgId)
    // Each call holds its worst case (its body's bytes and its output cap) until it settles: a burst
    // passes as many as those fit, fewer than the limit's worth of actual use for tokens.
    const passed = answers.filter((r) => r.status === 200).length
    if (metric === 'requests') expect(passed).toBe(8)
    else expect(passed).toBeGreaterThanOrEqual(6)
    expect(metric === 'tokens' ? spent.tokens : spent.successes).toBeLessThanOrEqual(limit)
  })

  test('each threshold and the breach are told once across both instances, as one outbox row each', async () => {
    const { a, b, org } = await twoInstances()
    const hook = await a.request('POST', '/v1/webhooks', {
      token: org.ownerSession,
      body: { destination: 'http://127.0.0.1:9/budget-events', events: ['budget.threshold_crossed', 'budget.breached'] },
    })
    expect(hook.status).toBe(201)
    const { id: webhookId } = await data<{ id: string }>(hook)
    await a.request('PUT', '/v1/budget/alert-config', {
      token: org.ownerSession,
      body: { thresholds: [25, 50], channels: ['webhook'] },
    })
    await putLimit(a, org, { scope: { kind: 'org' }, metric: 'requests', limit: 8, window: 'day', action: 'alert' })
    const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => chat(i % 2 === 0 ? a : b, org.apiKey)))
    expect(answers.every((r) => r.status === 200)).toBe(true)
    let events: string[] = []
    for (let i = 0; i < 100 && events.length < 3; i++) {
      await Bun.sleep(20)
      events = (await a.store.org(org.orgId).webhooks.deliveries(100, webhookId)).map((d) => d.event)
    }
    await Bun.sleep(100)
    events = (await a.store.org(org.orgId).webhooks.deliveries(100, webhookId)).map((d) => d.event)
    expect(events.sort()).toEqual(['budget.breached', 'budget.threshold_crossed', 'budget.threshold_crossed'])
  })
})

describe.skipIf(!ownRedisRunnable)('budgets through a Redis outage', () => {
  let redis: OwnRedis
  let stores: RedisStores | undefined
  beforeAll(async () => {
    redis = await startOwnRedis()
  })
  afterAll(async () => {
    if (stores) {
      await stores.invalidations.close()
      stores.client.disconnect()
    }
    await redis.stop()
  })

  test('while Redis is away limits hold per instance (never open), and its return counts the outage in from the log', async () => {
    stores = await openRedisStores(redis.url, silentLogger)
    const h = await createHarness({ providers: providersAt(fake), spendStore: stores.spendStore })
    harnesses.push(h)
    const org = await h.org('growth')
    await h.services.organizations.addCredits(org.orgId, 100)
    await putLimit(h, org, { scope: { kind: 'org' }, metric: 'requests', limit: 6, window: 'day' })
    for (let i = 0; i < 2; i++) expect((await chat(h, org.apiKey)).status).toBe(200)
    await h.requestLog.flush()

    await redis.kill()
    // The fallback counts the two calls in from the log: four more pass, then it refuses.
    const during = []
    for (let i = 0; i < 6; i++) during.push((await chat(h, org.apiKey)).status)
    expect(during).toEqual([200, 200, 200, 200, 429, 429])
    expect(stores.spendStore.degraded).toBe(true)
    await h.requestLog.flush()

    // Redis comes back empty: the next call, once the breaker lets it through, seeds from the log.
    await redis.restart()
    await Bun.sleep(REDIS_BREAKER_COOLDOWN_MS + 200)
    const after = []
    for (let i = 0; i < 3; i++) {
      after.push((await chat(h, org.apiKey)).status)
      await Bun.sleep(50)
    }
    expect(after).toEqual([429, 429, 429])
    expect(stores.spendStore.degraded).toBe(false)
    expect((await logged(h, org.orgId)).successes).toBe(6)
  })
})
