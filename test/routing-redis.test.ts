import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { silentLogger } from '../src/log'
import { openRedisStores, type RedisStores } from '../src/runtime'
import { type FakeProvider, providersAt, startFakeProvider } from './support/fake-provider'
import { createHarness, type Harness } from './support/harness'
import { serviceUrl } from './support/services'

/**
 * The response cache and the provider keys' cool-downs shared through Redis by two instances over one
 * database, as two gw instances behind a load balancer (GW_TEST_REDIS_URL, always in CI).
 */

const redisUrl = serviceUrl('GW_TEST_REDIS_URL')

let fake: FakeProvider
const harnesses: Harness[] = []
const stores: RedisStores[] = []
beforeAll(async () => {
  fake = await startFakeProvider()
})
afterEach(async () => {
  fake.unsteer()
  for (const h of harnesses.splice(0)) await h.close()
  for (const redis of stores.splice(0)) {
    await redis.invalidations.close()
    redis.client.disconnect()
  }
})
afterAll(() => fake.close())

async function twoInstances() {
  const instance = async (database?: Harness) => {
    const redis = await openRedisStores(redisUrl as string, silentLogger)
    stores.push(redis)
    return createHarness({
      providers: providersAt(fake),
      keyHealth: redis.keyHealth,
      responseCache: redis.responseCache,
      database,
    })
  }
  const a = await instance()
  const b = await instance(a)
  harnesses.push(b, a)
  const org = await a.org('growth')
  await a.services.organizations.addCredits(org.orgId, 100)
  return { a, b, org }
}

const chat = (content: string) => ({ model: 'gpt-4o', messages: [{ role: 'user', content }] })

describe.skipIf(!redisUrl)('routing on Redis, shared by two instances', () => {
  test('an answer one instance kept is a hit on the other; another organisation misses', async () => {
    const { a, b, org } = await twoInstances()
    const headers = { 'Gw-Cache-Enabled': 'true' }
    const body = chat(`shared ${crypto.randomUUID()}`)
    const first = await a.request('POST', '/v1/chat/completions', { token: org.apiKey, body, headers })
    expect(first.status).toBe(200)
    expect(first.headers.get('gw-cache')).toBe('MISS')
    const firstText = await first.text()
    // The save is off the answer's path: give it a moment to reach Redis.
    let second: Response | undefined
    for (let i = 0; i < 50; i++) {
      second = await b.request('POST', '/v1/chat/completions', { token: org.apiKey, body, headers: { 'Gw-Cache-Read': 'true' } })
      if (second.headers.get('gw-cache') === 'HIT') break
      await Bun.sleep(20)
    }
    expect(second?.headers.get('gw-cache')).toBe('HIT')
    expect(await second?.text()).toBe(firstText)
    const stranger = await b.org('growth')
    await b.services.organizations.addCredits(stranger.orgId, 100)
    const theirs = await b.request('POST', '/v1/chat/completions', { token: stranger.apiKey, body, headers })
    expect(theirs.status).toBe(200)
    expect(theirs.headers.get('gw-cache')).toBe('MISS')
  })

  test('a key one instance saw answer 429 is skipped by the other', async () => {
    const { a, b, org } = await twoInstances()
    const suffix = crypto.randomUUID().slice(0, 8)
    // The spare is a standby key (weight 0): the main key is always tried first while it is not cooling down.
    const ids: string[] = []
    for (const [name, weight] of [
      ['main', 1],
      ['spare', 0],
    ] as const) {
      const added = await a.request('POST', '/v1/api-keys/provider-key', {
        token: org.ownerSession,
        body: { provider: 'openai', name, secret: `sk-${name}-${suffix}`, weight },
      })
      expect(added.status).toBeLessThan(300)
      ids.push(((await added.json()) as { id: string }).id)
    }
    const [mainId] = ids as [string]
    fake.steer({ key: `sk-main-${suffix}`, directives: 'fake:error:429 fake:retry-after:30' })
    const failedOver = await a.request('POST', '/v1/chat/completions', { token: org.apiKey, body: chat('hi') })
    expect(failedOver.status).toBe(200)
    expect(failedOver.headers.get('gw-attempts')).toBe('2')
    // The cool-down is written off the answer's path, on instance a's own connection: wait until b's sees it.
    const bHealth = (stores[1] as RedisStores).keyHealth
    for (let i = 0; i < 50 && !(await bHealth.coolingDown([mainId])).has(mainId); i++) await Bun.sleep(10)
    const since = fake.calls.length
    const onB = await b.request('POST', '/v1/chat/completions', { token: org.apiKey, body: chat('hi') })
    expect(onB.status).toBe(200)
    expect(onB.headers.get('gw-attempts')).toBe('1')
    expect(fake.calls.slice(since).map((call) => call.headers.authorization)).toEqual([`Bearer sk-spare-${suffix}`])
  })
})
