import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type Redis from 'ioredis'
import type { GatewayMeta } from '../src/gateway/meta/store'
import type { Check } from '../src/limits/store'
import { createLogger, type Logger } from '../src/log'
import type { ComponentState } from '../src/modules/health/service'
import { openRedisStores, REDIS_BREAKER_COOLDOWN_MS, REDIS_COMMAND_TIMEOUT_MS, type RedisStores } from '../src/runtime'
import { type FakeProvider, providersAt, startFakeProvider } from './support/fake-provider'
import { createHarness, type Harness } from './support/harness'
import { eventually, type OwnRedis, startOwnRedis } from './support/redis-server'

// The test kills Redis, so it runs its own redis-server; CI must have one, a laptop may skip.
const runnable = Bun.which('redis-server') !== null || process.env.GW_TEST_REQUIRE_SERVICES === '1'

/** A logger that keeps its lines, to count what an outage wrote. */
function capturedLog(): { log: Logger; messages: (start: string) => number } {
  const lines: Array<{ level: string; message: string }> = []
  const log = createLogger('info', (line) => lines.push(JSON.parse(line) as { level: string; message: string }))
  return { log, messages: (start) => lines.filter((line) => line.message.startsWith(start)).length }
}

/** Counts the commands the client is asked to send, connected or not. */
function commandCounter(client: Redis): () => number {
  let count = 0
  const send = client.sendCommand.bind(client)
  client.sendCommand = (...args: Parameters<Redis['sendCommand']>) => {
    count += 1
    return send(...args)
  }
  return () => count
}

async function health(stores: RedisStores): Promise<Record<string, ComponentState>> {
  return Object.fromEntries(await Promise.all(stores.probes.map(async (p) => [p.name, await p.check()] as const)))
}

const meta = (requestId: string): GatewayMeta => ({ requestId, provider: 'openai', model: 'gpt-4o', status: 'success' })
const windowOf = (key: string, limit: number): Check[] => [{ kind: 'window', key, limit, windowMs: 3_600_000 }]

/**
 * Keeps `workers` loops of calls going until stopped. Each loop yields to the event loop once a turn:
 * while Redis is down the calls are all in process and would otherwise never let a timer run.
 */
function keepCalling(workers: number, call: (worker: number) => Promise<void>) {
  let running = true
  let calls = 0
  const failures: unknown[] = []
  const loops = Array.from({ length: workers }, async (_, worker) => {
    while (running) {
      await call(worker).catch((error: unknown) => failures.push(error))
      calls += 1
      await Bun.sleep(0)
    }
  })
  return {
    calls: () => calls,
    async stop() {
      running = false
      await Promise.all(loops)
      return failures
    },
  }
}

describe.skipIf(!runnable)('a Redis outage', () => {
  let redis: OwnRedis
  const opened: RedisStores[] = []
  const clock = { now: Date.now() }
  const open = async (log: Logger) => {
    const stores = await openRedisStores(redis.url, log, () => clock.now)
    opened.push(stores)
    return stores
  }

  beforeAll(async () => {
    redis = await startOwnRedis()
  })
  afterAll(async () => {
    for (const stores of opened) {
      await stores.invalidations.close()
      stores.client.disconnect()
    }
    await redis.stop()
  })

  test('the stores keep limits in process, never wait on Redis while it is away, and hand back to it', async () => {
    const { log, messages } = capturedLog()
    const a = await open(log)
    const b = await open(createLogger('error', () => undefined))
    const sent = commandCounter(a.client)
    expect(await health(a)).toEqual({ rate_limiter: 'ok', budgets: 'ok', metadata: 'ok', redis: 'ok' })

    const load = keepCalling(8, async (worker) => {
      const id = crypto.randomUUID()
      await a.limiterStore.decide(windowOf(`gw:rl:{load}:w:${worker}`, 1e9))
      await a.meta.put({ orgId: 'org-load', meta: meta(id) }, 300)
      // Not asserted found: a record put in Redis just before it died is out of reach until it is back.
      await a.meta.get(id)
    })
    await eventually(() => load.calls() >= 200, 'calls on Redis')
    await redis.kill()
    const atKill = load.calls()
    await eventually(() => load.calls() >= atKill + 200, 'calls during the outage')
    expect(await load.stop()).toEqual([])
    expect(a.breaker.isOpen).toBe(true)
    expect(messages('redis unavailable')).toBe(1)

    // While the breaker is open nothing is sent to Redis: no call can wait on it.
    const before = sent()
    let slowest = 0
    for (let i = 0; i < 50; i++) {
      const started = performance.now()
      await a.limiterStore.decide(windowOf('gw:rl:{idle}:w', 1e9))
      await a.limiterStore.charge('gw:rl:{idle}:b', 1e9, 3_600_000, 1)
      await a.meta.put({ orgId: 'org-a', meta: meta(`idle-${i}`) }, 300)
      await a.meta.get(`idle-${i}`)
      await a.invalidations.publish('credential')
      await health(a)
      slowest = Math.max(slowest, performance.now() - started)
    }
    expect(sent()).toBe(before)
    expect(slowest).toBeLessThan(REDIS_COMMAND_TIMEOUT_MS)

    // A limit of 5 still refuses the 6th call, from this instance's own state.
    const during: boolean[] = []
    for (let i = 0; i < 6; i++)
      during.push(((await a.limiterStore.decide(windowOf('gw:rl:{outage}:w', 5)))[0] as { allowed: boolean }).allowed)
    expect(during).toEqual([true, true, true, true, true, false])

    // Metadata: the store keeps nothing in process; the lookup reads this instance's request log
    // instead (through the gateway, below).
    await a.meta.put({ orgId: 'org-a', meta: meta('served-during') }, 300)
    expect(await a.meta.get('served-during')).toBeUndefined()

    // Invalidations still reach this instance at once.
    const heardByA: string[] = []
    a.invalidations.subscribe((key) => heardByA.push(key))
    await a.invalidations.publish('revoked-during')
    expect(heardByA).toEqual(['revoked-during'])

    expect(await health(a)).toEqual({ rate_limiter: 'degraded', budgets: 'degraded', metadata: 'degraded', redis: 'down' })

    // After the cooldown one call probes Redis, which is still gone: the breaker stays open, silently.
    clock.now += REDIS_BREAKER_COOLDOWN_MS
    const beforeProbe = sent()
    await a.limiterStore.decide(windowOf('gw:rl:{idle}:w', 1e9))
    await a.limiterStore.decide(windowOf('gw:rl:{idle}:w', 1e9))
    expect(sent() - beforeProbe).toBe(1)
    expect(a.breaker.isOpen).toBe(true)
    expect(messages('redis unavailable')).toBe(1)

    await redis.restart()
    await eventually(() => a.client.status === 'ready', 'the client reconnected')
    clock.now += REDIS_BREAKER_COOLDOWN_MS
    expect(((await a.limiterStore.decide(windowOf('gw:rl:{after}:w', 5)))[0] as { allowed: boolean }).allowed).toBe(true)
    expect(a.breaker.isOpen).toBe(false)
    expect(messages('redis answers again')).toBe(1)
    expect(messages('redis unavailable')).toBe(1)

    // Redis is authoritative again: what is written now is in Redis, which restarted empty.
    expect(await a.client.hget('gw:rl:{after}:w', 'c')).toBe('1')
    await a.meta.put({ orgId: 'org-a', meta: meta('served-after') }, 300)
    expect(await a.client.exists('gw:meta:served-after')).toBe(1)
    expect(await health(a)).toEqual({ rate_limiter: 'ok', budgets: 'ok', metadata: 'ok', redis: 'ok' })

    // And invalidations reach the other instances again, once its subscription is back.
    const heardByB: string[] = []
    b.invalidations.subscribe((key) => heardByB.push(key))
    await eventually(async () => {
      await a.invalidations.publish('revoked-after')
      await Bun.sleep(20)
      return heardByB.includes('revoked-after')
    }, 'the other instance heard the invalidation')
  })

  test('a stalled Redis (connected, silent) costs one call the command timeout, then none until it answers again', async () => {
    if (!redis.running) await redis.restart()
    const { log, messages } = capturedLog()
    const stores = await open(log)
    const sent = commandCounter(stores.client)
    const check = windowOf('gw:rl:{stalled}:w', 1e9)
    expect((await stores.limiterStore.decide(check))[0]?.allowed).toBe(true)

    redis.pause()
    try {
      const started = performance.now()
      expect((await stores.limiterStore.decide(check))[0]?.allowed).toBe(true)
      // Generous: the point is that the wait is bounded by the command timeout, not by the old second.
      expect(performance.now() - started).toBeLessThan(1_000)
      expect(stores.breaker.isOpen).toBe(true)
      const before = sent()
      for (let i = 0; i < 50; i++) {
        await stores.limiterStore.decide(check)
        await stores.meta.put({ orgId: 'org-s', meta: meta(`stalled-${i}`) }, 300)
        await stores.invalidations.publish('credential')
      }
      expect(await health(stores)).toEqual({ rate_limiter: 'degraded', budgets: 'degraded', metadata: 'degraded', redis: 'down' })
      expect(sent()).toBe(before)
    } finally {
      redis.resume()
    }
    clock.now += REDIS_BREAKER_COOLDOWN_MS
    expect((await stores.limiterStore.decide(check))[0]?.allowed).toBe(true)
    expect(stores.breaker.isOpen).toBe(false)
    expect([messages('redis unavailable'), messages('redis answers again')]).toEqual([1, 1])
  })

  describe('through the gateway', () => {
    let fake: FakeProvider
    let h: Harness
    let stores: RedisStores
    const log = capturedLog()
    beforeAll(async () => {
      fake = await startFakeProvider()
      // Up whatever the test before it left behind.
      if (!redis.running) await redis.restart()
      stores = await open(log.log)
      h = await createHarness({
        providers: providersAt(fake),
        limiterStore: stores.limiterStore,
        meta: stores.meta,
        invalidations: stores.invalidations,
        probes: stores.probes,
      })
    })
    afterAll(async () => {
      await h.close()
      await fake.close()
    })

    const funded = async () => {
      const org = await h.org('growth')
      await h.services.organizations.addCredits(org.orgId, 1_000)
      return org
    }
    const chat = (apiKey: string, headers: Record<string, string> = {}) =>
      h.request('POST', '/v1/chat/completions', {
        token: apiKey,
        headers,
        body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] },
      })
    const healthOf = async () => {
      const response = await h.request('GET', '/healthcheck')
      return { status: response.status, body: (await response.json()) as { status: string; components: Record<string, string> } }
    }

    test('calls are served and limited, health says degraded, and Redis is back in charge without a restart', async () => {
      const org = await funded()
      expect((await chat(org.apiKey)).status).toBe(200)
      expect(await healthOf()).toMatchObject({ status: 200, body: { status: 'ok' } })

      const statuses: number[] = []
      const load = keepCalling(8, async () => {
        const response = await chat(org.apiKey)
        await response.arrayBuffer()
        statuses.push(response.status)
      })
      await eventually(() => load.calls() >= 50, 'calls on Redis')
      await redis.kill()
      const atKill = load.calls()
      await eventually(() => load.calls() >= atKill + 50, 'calls during the outage')
      expect(await load.stop()).toEqual([])
      expect(statuses.filter((s) => s !== 200)).toEqual([])
      expect(log.messages('redis unavailable')).toBe(1)

      expect(await healthOf()).toMatchObject({
        status: 200,
        body: {
          status: 'degraded',
          components: { rate_limiter: 'degraded', budgets: 'degraded', metadata: 'degraded', redis: 'down' },
        },
      })

      const limited = await funded()
      const policy = { 'Gw-RateLimit-Policy': '3;w=3600' }
      const during: number[] = []
      for (let i = 0; i < 4; i++) during.push((await chat(limited.apiKey, policy)).status)
      expect(during).toEqual([200, 200, 200, 429])

      const served = (await chat(org.apiKey)).headers.get('gw-id') as string
      expect((await h.request('GET', `/gateway/v1/meta/${served}`, { token: org.apiKey })).status).toBe(200)
      expect((await h.request('GET', `/gateway/v1/meta/${crypto.randomUUID()}`, { token: org.apiKey })).status).toBe(202)

      await redis.restart()
      await eventually(() => stores.client.status === 'ready', 'the client reconnected')
      clock.now += REDIS_BREAKER_COOLDOWN_MS
      const after = await chat(org.apiKey)
      expect(after.status).toBe(200)
      // Redis holds nothing of the call served during the outage; its record answers for it.
      expect((await h.request('GET', `/gateway/v1/meta/${served}`, { token: org.apiKey })).status).toBe(200)
      expect(log.messages('redis answers again')).toBe(1)
      expect(await healthOf()).toMatchObject({
        status: 200,
        body: { status: 'ok', components: { rate_limiter: 'ok', budgets: 'ok', metadata: 'ok', redis: 'ok' } },
      })
      // Redis restarted empty: these were written after it came back.
      const metaKey = `gw:meta:${after.headers.get('gw-id')}`
      await eventually(async () => (await stores.client.exists(metaKey)) === 1, 'the metadata is in Redis')
      expect((await stores.client.keys(`gw:rl:{${org.orgId}}:*`)).length).toBeGreaterThan(0)
    })
  })
})

test('Redis unreachable at start: one log line, which never shows the URL or its password', async () => {
  const lines: string[] = []
  const stores = await openRedisStores(
    'redis://gw:hunter2-secret@127.0.0.1:1',
    createLogger('info', (line) => lines.push(line)),
  )
  try {
    expect(stores.breaker.isOpen).toBe(true)
    await stores.limiterStore.decide(windowOf('gw:rl:{start}:w', 5))
    await stores.meta.put({ orgId: 'org-start', meta: meta('at-start') }, 300)
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain('redis unavailable')
    expect(lines[0]).not.toContain('hunter2')
    expect(lines[0]).not.toContain('redis://')
  } finally {
    await stores.invalidations.close()
    stores.client.disconnect()
  }
})
