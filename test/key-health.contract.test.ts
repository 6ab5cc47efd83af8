import { afterAll, describe, expect, test } from 'bun:test'
import type Redis from 'ioredis'
import {
  FailoverKeyHealth,
  type KeyHealth,
  MAX_COOLDOWN_MS,
  MemoryKeyHealth,
  operatorKeyId,
} from '../src/gateway/routing/key-health'
import { pickKey } from '../src/gateway/routing/pick-key'
import { RedisKeyHealth } from '../src/gateway/routing/redis-key-health'
import { silentLogger } from '../src/log'
import { openRedisStores, REDIS_COMMAND_TIMEOUT_MS, redisClient } from '../src/runtime'
import { CircuitBreaker } from '../src/util/breaker'
import {
  contractTestOf,
  lazyClient,
  manualClock,
  type Phase,
  RedisPool,
  redisClock,
  redisUrl,
  type StoreClock,
  unreachable,
} from './support/contract'

/**
 * Key health's contract (docs/decisions.md, "Provider key load balancing"), the same for every
 * implementation: in process always; Redis and the failover wrapper over it whenever GW_TEST_REDIS_URL
 * is set (always in CI); and the failover wrapper on its in-process fallback, as while Redis is away.
 * In process the test holds the clock; on Redis the server expires the keys, and the test waits with
 * room either side of each instant.
 */

const pool = redisUrl ? new RedisPool(redisUrl) : undefined
afterAll(() => pool?.close())

/** Nothing listens on the discard port: a Redis there is a Redis that is down. */
const DOWN_REDIS = 'redis://127.0.0.1:9'

interface HealthInstance {
  health: KeyHealth
  clock: StoreClock
  /** Another instance on a connection of its own, sharing this one's cool-downs (shared implementations only). */
  peer?: () => KeyHealth
  /** What the test cannot see through the interface: a failover still on Redis, or still off it. */
  verify(): void
}

interface HealthSubject {
  name: string
  runs: boolean
  shared: boolean
  open(): HealthInstance
}

const inProcess = (): HealthSubject => ({
  name: 'in process (MemoryKeyHealth)',
  runs: true,
  shared: false,
  open() {
    const clock = manualClock()
    return { health: new MemoryKeyHealth(clock.read), clock, verify: () => undefined }
  },
})

const onRedis = (): HealthSubject => {
  const main = lazyClient(pool)
  const other = lazyClient(pool)
  return {
    name: 'Redis (RedisKeyHealth)',
    runs: pool !== undefined,
    shared: true,
    open() {
      const prefix = (pool as RedisPool).namespace()
      return {
        health: new RedisKeyHealth(main(), prefix),
        clock: redisClock(main()),
        peer: () => new RedisKeyHealth(other(), prefix),
        verify: () => undefined,
      }
    },
  }
}

const failoverOnRedis = (): HealthSubject => {
  const main = lazyClient(pool)
  const other = lazyClient(pool)
  return {
    name: 'failover with Redis answering (FailoverKeyHealth)',
    runs: pool !== undefined,
    shared: true,
    open() {
      const prefix = (pool as RedisPool).namespace()
      const breakers: CircuitBreaker[] = []
      // As runtime.ts wires it: each instance with its own in-process fallback.
      const failover = (client: Redis) => {
        const breaker = new CircuitBreaker()
        breakers.push(breaker)
        return new FailoverKeyHealth(new RedisKeyHealth(client, prefix), new MemoryKeyHealth(), breaker)
      }
      return {
        health: failover(main()),
        clock: redisClock(main()),
        peer: () => failover(other()),
        // A Redis error would open the breaker and hide behind the fallback: the test was on Redis only if none did.
        verify: () => expect(breakers.map((b) => b.isOpen)).toEqual(breakers.map(() => false)),
      }
    },
  }
}

const failoverDegraded = (): HealthSubject => ({
  name: 'failover with Redis away (FailoverKeyHealth on its in-process fallback)',
  runs: true,
  shared: false,
  open() {
    const clock = manualClock()
    const primary = unreachable<KeyHealth>(['coolingDown', 'coolDown', 'recovered'])
    // The breaker's own clock stands still: its cooldown never ends, so no call probes the primary.
    const breaker = new CircuitBreaker({ now: () => 0 })
    breaker.trip(new Error('redis is away'))
    return {
      health: new FailoverKeyHealth(primary, new MemoryKeyHealth(clock.read), breaker),
      clock,
      verify: () => {
        expect(primary.calls).toBe(0)
        expect(breaker.isOpen).toBe(true)
      },
    }
  },
})

const uuid = () => crypto.randomUUID()
const sorted = (set: ReadonlySet<string>) => [...set].sort()

function keyHealthContract(subject: HealthSubject, phase: Phase): void {
  const title = `key health contract: ${subject.name}${phase === 'over time' ? ', over time' : ''}`
  describe.skipIf(!subject.runs)(title, () => {
    const contractTest = contractTestOf(subject, phase)

    contractTest('nothing is cooling down until told; no ids, no answer', async ({ health }) => {
      expect(sorted(await health.coolingDown([uuid(), operatorKeyId('openai')]))).toEqual([])
      expect(sorted(await health.coolingDown([]))).toEqual([])
    })

    contractTest('a key cooled down is cooling down; the answer holds only ids asked about', async ({ health }) => {
      const [a, b, c] = [uuid(), uuid(), uuid()]
      await health.coolDown(a, 60_000)
      await health.coolDown(c, 60_000)
      expect(sorted(await health.coolingDown([a, b]))).toEqual([a])
      expect(sorted(await health.coolingDown([b, c, a, a]))).toEqual([a, c].sort())
    })

    contractTest(
      'recovered ends the cool-down at once; recovering a key that was not cooling is harmless',
      async ({ health }) => {
        const [a, b] = [uuid(), uuid()]
        await health.coolDown(a, 60_000)
        await health.recovered(a)
        await health.recovered(b)
        expect(sorted(await health.coolingDown([a, b]))).toEqual([])
        await health.coolDown(a, 60_000)
        expect(sorted(await health.coolingDown([a]))).toEqual([a])
      },
    )

    contractTest('ids are independent: one cooling down or recovering changes no other', async ({ health }) => {
      const a = uuid()
      const b = uuid()
      const operator = operatorKeyId('anthropic')
      await health.recovered(operator)
      await health.coolDown(a, 60_000)
      expect(sorted(await health.coolingDown([a, b, operator]))).toEqual([a])
      await health.coolDown(b, 60_000)
      await health.recovered(a)
      expect(sorted(await health.coolingDown([a, b, operator]))).toEqual([b])
      await health.recovered(b)
    })

    contractTest('a cool-down of 0 ms or less, or of no number, ends one instead of starting one', async ({ health }) => {
      const [a, b, c] = [uuid(), uuid(), uuid()]
      for (const id of [a, b, c]) await health.coolDown(id, 60_000)
      await health.coolDown(a, 0)
      await health.coolDown(b, -5)
      await health.coolDown(c, Number.NaN)
      expect(sorted(await health.coolingDown([a, b, c]))).toEqual([])
    })

    contractTest(
      'a cool-down ends by itself after its ms; a longer one goes on',
      async ({ health, clock }) => {
        const [brief, long, fraction] = [uuid(), uuid(), uuid()]
        await health.coolDown(brief, 300)
        await health.coolDown(fraction, 299.5)
        await health.coolDown(long, 5_000)
        await clock.advance(100)
        expect(sorted(await health.coolingDown([brief, long, fraction]))).toEqual([brief, long, fraction].sort())
        await clock.advance(400)
        expect(sorted(await health.coolingDown([brief, long, fraction]))).toEqual([long])
      },
      { waits: true },
    )

    contractTest(
      'a new cool-down replaces the one a key had, shorter or longer',
      async ({ health, clock }) => {
        const [shortened, lengthened] = [uuid(), uuid()]
        await health.coolDown(shortened, 60_000)
        await health.coolDown(shortened, 200)
        await health.coolDown(lengthened, 200)
        await health.coolDown(lengthened, 60_000)
        await clock.advance(500)
        expect(sorted(await health.coolingDown([shortened, lengthened]))).toEqual([lengthened])
      },
      { waits: true },
    )

    contractTest(
      'shared: another instance, on a connection of its own, passes over what this one cooled down, and sees it recover',
      async (instance) => {
        const { health, clock } = instance
        const peer = (instance.peer as () => KeyHealth)()
        const [a, b, brief] = [uuid(), uuid(), uuid()]
        await health.coolDown(a, 60_000)
        await peer.coolDown(b, 60_000)
        await health.coolDown(brief, 300)
        expect(sorted(await peer.coolingDown([a, b, brief]))).toEqual([a, b, brief].sort())
        await peer.recovered(a)
        expect(sorted(await health.coolingDown([a, b]))).toEqual([b])
        await clock.advance(500)
        expect(sorted(await peer.coolingDown([brief]))).toEqual([])
      },
      { waits: true, sharedOnly: true },
    )
  })
}

const subjects = [inProcess(), onRedis(), failoverOnRedis(), failoverDegraded()]
for (const subject of subjects) keyHealthContract(subject, 'at once')
for (const subject of subjects) keyHealthContract(subject, 'over time')

describe('the in-process key health', () => {
  test('holds at most its bound: the key cooled down longest ago goes first', async () => {
    const clock = manualClock()
    const health = new MemoryKeyHealth(clock.read, 3)
    for (const id of ['a', 'b', 'c']) await health.coolDown(id, 60_000)
    // Cooled down again, `a` is now the newest.
    await health.coolDown('a', 60_000)
    await health.coolDown('d', 60_000)
    expect(health.size).toBe(3)
    expect(sorted(await health.coolingDown(['a', 'b', 'c', 'd']))).toEqual(['a', 'c', 'd'])
  })

  test('lapsed cool-downs are dropped, when read and as new ones come', async () => {
    const clock = manualClock()
    const health = new MemoryKeyHealth(clock.read)
    await health.coolDown('read', 100)
    await health.coolDown('old', 100)
    await clock.advance(99)
    expect(sorted(await health.coolingDown(['read']))).toEqual(['read'])
    await clock.advance(1)
    expect(sorted(await health.coolingDown(['read']))).toEqual([])
    expect(health.size).toBe(1)
    await health.coolDown('new', 100)
    expect(health.size).toBe(1)
  })

  test('a cool-down is at most an hour, whatever a provider asked for', async () => {
    const clock = manualClock()
    const health = new MemoryKeyHealth(clock.read)
    await health.coolDown('a', 86_400_000)
    await health.coolDown('b', Number.POSITIVE_INFINITY)
    await clock.advance(MAX_COOLDOWN_MS - 1)
    expect(sorted(await health.coolingDown(['a', 'b']))).toEqual(['a', 'b'])
    await clock.advance(1)
    expect(sorted(await health.coolingDown(['a', 'b']))).toEqual([])
  })
})

describe.skipIf(pool === undefined)('the Redis key health', () => {
  test('one key per id, gw:key-cooldown:<id>, that Redis expires with the cool-down', async () => {
    const client = (pool as RedisPool).client()
    const health = new RedisKeyHealth(client)
    const id = `test-${uuid()}`
    try {
      await health.coolDown(id, 5_000)
      expect(await client.get(`gw:key-cooldown:${id}`)).toBe('1')
      const ttl = await client.pttl(`gw:key-cooldown:${id}`)
      expect(ttl).toBeGreaterThan(4_000)
      expect(ttl).toBeLessThanOrEqual(5_000)
      await health.coolDown(id, MAX_COOLDOWN_MS * 10)
      expect(await client.pttl(`gw:key-cooldown:${id}`)).toBeLessThanOrEqual(MAX_COOLDOWN_MS)
      await health.recovered(id)
      expect(await client.exists(`gw:key-cooldown:${id}`)).toBe(0)
    } finally {
      await client.del(`gw:key-cooldown:${id}`)
    }
  })
})

describe('key health while Redis is down', () => {
  test('the first call meets the failure and opens the breaker; no call throws, and none waits', async () => {
    const client = await redisClient(DOWN_REDIS)
    try {
      expect(client.status).not.toBe('ready')
      const redis = new RedisKeyHealth(client)
      // Without the breaker the failure is the caller's: a failed read must never pass for "not cooling".
      await expect(redis.coolingDown(['a'])).rejects.toThrow()
      const breaker = new CircuitBreaker({ cooldownMs: 60_000 })
      const health = new FailoverKeyHealth(redis, new MemoryKeyHealth(), breaker)
      const started = performance.now()
      await health.coolDown('a', 60_000)
      expect(breaker.isOpen).toBe(true)
      for (let i = 0; i < 1_000; i++) {
        await health.coolDown(`k${i}`, 60_000)
        await health.coolingDown(['a', `k${i}`, 'b'])
      }
      await health.recovered('k0')
      expect(sorted(await health.coolingDown(['a', 'k0', 'k1', 'b']))).toEqual(['a', 'k1'])
      // Every call answered in process: far below one command timeout for all 2,000 of them.
      expect(performance.now() - started).toBeLessThan(REDIS_COMMAND_TIMEOUT_MS)
    } finally {
      client.disconnect()
    }
  })

  test('as the runtime builds it: Redis away at start, key health answers in process from the first call', async () => {
    const stores = await openRedisStores(DOWN_REDIS, silentLogger)
    try {
      const started = performance.now()
      await stores.keyHealth.coolDown(operatorKeyId('openai'), 60_000)
      expect(sorted(await stores.keyHealth.coolingDown([operatorKeyId('openai'), operatorKeyId('anthropic')]))).toEqual([
        operatorKeyId('openai'),
      ])
      expect(stores.keyHealth.degraded).toBe(true)
      expect(performance.now() - started).toBeLessThan(REDIS_COMMAND_TIMEOUT_MS)
    } finally {
      await stores.invalidations.close()
      stores.client.disconnect()
    }
  })

  test.skipIf(pool === undefined)(
    'what this instance cooled down while Redis answered is still passed over here when Redis goes',
    async () => {
      const prefix = (pool as RedisPool).namespace()
      const breaker = new CircuitBreaker({ now: () => 0 })
      const health = new FailoverKeyHealth(
        new RedisKeyHealth((pool as RedisPool).client(), prefix),
        new MemoryKeyHealth(),
        breaker,
      )
      await health.coolDown('seen-failing', 60_000)
      await health.coolDown('seen-recovering', 60_000)
      await health.recovered('seen-recovering')
      breaker.trip(new Error('redis is away'))
      expect(sorted(await health.coolingDown(['seen-failing', 'seen-recovering']))).toEqual(['seen-failing'])
    },
  )
})

/** A small seeded generator (mulberry32): the same picks on every run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}

const key = (id: string, weight: number) => ({ id, weight })
const none: ReadonlySet<string> = new Set()

/** How often each key is picked in `rounds` picks. */
function shares(
  keys: ReadonlyArray<{ id: string; weight: number }>,
  rounds: number,
  cooling: ReadonlySet<string> = none,
  tried: ReadonlySet<string> = none,
): Record<string, number> {
  const random = seeded(0x5eed)
  const counts: Record<string, number> = {}
  for (let i = 0; i < rounds; i++) {
    const picked = pickKey(keys, cooling, tried, random)
    const id = picked?.id ?? 'none'
    counts[id] = (counts[id] ?? 0) + 1
  }
  return counts
}

describe('pickKey', () => {
  test('weights are shares: 3:1 over 4,000 picks is 75 % and 25 %, within a few percent', () => {
    const counts = shares([key('a', 3), key('b', 1)], 4_000)
    expect(Math.abs((counts.a ?? 0) / 4_000 - 0.75)).toBeLessThan(0.03)
    expect(Math.abs((counts.b ?? 0) / 4_000 - 0.25)).toBeLessThan(0.03)
  })

  test('several weights, and a weight far above the others, keep their shares', () => {
    const counts = shares([key('a', 1), key('b', 2), key('c', 7)], 10_000)
    expect(Math.abs((counts.a ?? 0) / 10_000 - 0.1)).toBeLessThan(0.02)
    expect(Math.abs((counts.b ?? 0) / 10_000 - 0.2)).toBeLessThan(0.02)
    expect(Math.abs((counts.c ?? 0) / 10_000 - 0.7)).toBeLessThan(0.02)
    const skewed = shares([key('heavy', 1_000), key('light', 1)], 10_000)
    expect(skewed.light ?? 0).toBeLessThan(40)
  })

  test('a key cooling down is passed over while another is ready', () => {
    expect(shares([key('a', 3), key('b', 1)], 500, new Set(['a']))).toEqual({ b: 500 })
  })

  test('a standby key (weight 0) is used only when no weighted key is ready', () => {
    const keys = [key('standby', 0), key('a', 1), key('b', 1)]
    expect(shares(keys, 1_000).standby).toBeUndefined()
    expect(shares(keys, 200, new Set(['a']), new Set(['b']))).toEqual({ standby: 200 })
    expect(shares(keys, 200, new Set(['a', 'b']))).toEqual({ standby: 200 })
    // Several standby keys share the standby's calls.
    const standbys = shares([key('s1', 0), key('s2', 0), key('a', 1)], 1_000, new Set(['a']))
    expect((standbys.s1 ?? 0) + (standbys.s2 ?? 0)).toBe(1_000)
    expect(Math.min(standbys.s1 ?? 0, standbys.s2 ?? 0)).toBeGreaterThan(400)
  })

  test('a key this call already tried is never picked again; every key tried is undefined', () => {
    const keys = [key('a', 5), key('b', 1), key('standby', 0)]
    expect(shares(keys, 200, none, new Set(['a']))).toEqual({ b: 200 })
    expect(shares(keys, 200, none, new Set(['a', 'b']))).toEqual({ standby: 200 })
    expect(pickKey(keys, none, new Set(['a', 'b', 'standby']))).toBeUndefined()
    expect(pickKey(keys, new Set(['a', 'b', 'standby']), new Set(['a', 'b', 'standby']))).toBeUndefined()
    expect(pickKey([], none, none)).toBeUndefined()
  })

  test('a lone key is picked whatever its weight or cool-down, until the call has tried it', () => {
    for (const lone of [key('only', 3), key('standby', 0), key('odd', Number.NaN)]) {
      expect(pickKey([lone], none, none)).toBe(lone)
      expect(pickKey([lone], new Set([lone.id]), none)).toBe(lone)
      expect(pickKey([lone], none, new Set([lone.id]))).toBeUndefined()
    }
  })

  test('every untried key cooling down: still one, the highest weight, the first of equals in the order given', () => {
    const keys = [key('standby', 0), key('newer', 2), key('older', 2), key('light', 1)]
    const all = new Set(keys.map((k) => k.id))
    expect(pickKey(keys, all, none)?.id).toBe('newer')
    expect(pickKey(keys, all, new Set(['newer']))?.id).toBe('older')
    expect(pickKey(keys, all, new Set(['newer', 'older', 'light']))?.id).toBe('standby')
    expect(pickKey([key('only', 1)], new Set(['only']), none)?.id).toBe('only')
  })

  test('a random number at either end of its range still picks a key', () => {
    const keys = [key('a', 1), key('b', 1)]
    expect(pickKey(keys, none, none, () => 0)?.id).toBe('a')
    expect(pickKey(keys, none, none, () => 1 - Number.EPSILON)?.id).toBe('b')
    expect(pickKey([key('s1', 0), key('s2', 0)], none, none, () => 1 - Number.EPSILON)?.id).toBe('s2')
  })

  test('answers the key object itself, with whatever else it carries', () => {
    const keys = [{ id: 'a', weight: 1, apiKey: 'sk-a' }]
    expect(pickKey(keys, none, none)).toBe(keys[0])
  })
})
