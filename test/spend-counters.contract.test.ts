import { afterAll, describe, expect, test } from 'bun:test'
import { type CounterSpec, MemorySpendStore, type SpendStore } from '../src/spend/counters'
import { FailoverSpendStore } from '../src/spend/failover-counters'
import { RedisSpendStore } from '../src/spend/redis-counters'
import { CircuitBreaker } from '../src/util/breaker'
import { lazyClient, RedisPool, redisUrl, unreachable } from './support/contract'

/**
 * The spend counters' contract, the same for every implementation: in process always; Redis (one Lua
 * script per reservation) and the failover wrapper over it whenever GW_TEST_REDIS_URL is set (always in
 * CI); and the failover wrapper working from its fallback, as while Redis is away. The clock is passed
 * in, so every figure is exact on each.
 */

const pool = redisUrl ? new RedisPool(redisUrl) : undefined
afterAll(() => pool?.close())

const T0 = Date.UTC(2026, 0, 1)
const HOUR = 3_600_000

interface Subject {
  name: string
  runs: boolean
  open(): { store: SpendStore; key: (name: string) => string; peer?: () => SpendStore }
}

const tagged = (root: string) => {
  const tag = crypto.randomUUID()
  return (name: string) => `${root}{${tag}}:${name}`
}

const subjects: Subject[] = [
  { name: 'in process (MemorySpendStore)', runs: true, open: () => ({ store: new MemorySpendStore(), key: tagged('gw:sp:') }) },
  {
    name: 'Redis (RedisSpendStore)',
    runs: pool !== undefined,
    open: () => {
      const main = lazyClient(pool)
      const other = lazyClient(pool)
      return {
        store: new RedisSpendStore(main()),
        key: tagged((pool as RedisPool).root),
        peer: () => new RedisSpendStore(other()),
      }
    },
  },
  {
    name: 'failover with Redis answering (FailoverSpendStore)',
    runs: pool !== undefined,
    open: () => ({
      store: new FailoverSpendStore(new RedisSpendStore(lazyClient(pool)()), new MemorySpendStore(), new CircuitBreaker()),
      key: tagged((pool as RedisPool).root),
    }),
  },
  {
    name: 'failover while Redis is away (its in-process fallback)',
    runs: true,
    open: () => {
      const breaker = new CircuitBreaker({ cooldownMs: Number.POSITIVE_INFINITY })
      breaker.trip(new Error('down'))
      const primary = unreachable<SpendStore>(['reserve', 'settle', 'seed', 'read', 'unseed'], { name: 'redis' })
      return { store: new FailoverSpendStore(primary, new MemorySpendStore(), breaker), key: tagged('gw:sp:') }
    },
  },
]

/** A fixed window of an hour starting at T0. */
const fixed = (key: string, limit: number): CounterSpec => ({
  key,
  limit,
  slots: 1,
  slotMs: HOUR,
  slotStart: T0,
  countFrom: T0,
  seedMark: String(T0),
  ttlMs: 2 * HOUR,
})

/** A sliding window of 20 s in 21 one-second slots, at `now`. */
const sliding = (key: string, limit: number, now: number): CounterSpec => {
  const slotStart = Math.floor(now / 1000) * 1000
  return { key, limit, slots: 21, slotMs: 1000, slotStart, countFrom: slotStart - 20_000, seedMark: 'sliding', ttlMs: 60_000 }
}

for (const subject of subjects) {
  describe.skipIf(!subject.runs)(`spend counters: ${subject.name}`, () => {
    test('a counter not seeded for its window holds nothing and says so; seeded, it counts the log in', async () => {
      const { store, key } = subject.open()
      const c = fixed(key('a'), 100)
      expect(await store.reserve('h1', T0 + HOUR, [c], [10], T0)).toEqual({ kind: 'unseeded', indexes: [0] })
      await store.seed(c, 30, T0)
      const [state] = await store.read([c], T0)
      expect(state).toMatchObject({ spent: 30, reserved: 0, seeded: true })
      // Seeding again for the same window changes nothing.
      await store.seed(c, 999, T0)
      expect((await store.read([c], T0))[0]?.spent).toBe(30)
    })

    test('holds are all or nothing across counters; the first that would pass its limit refuses', async () => {
      const { store, key } = subject.open()
      const a = fixed(key('a'), 100)
      const b = fixed(key('b'), 50)
      await store.seed(a, 0, T0)
      await store.seed(b, 40, T0)
      const refused = await store.reserve('h1', T0 + HOUR, [a, b], [20, 20], T0)
      expect(refused).toMatchObject({ kind: 'refused', index: 1 })
      expect((await store.read([a, b], T0)).map((s) => s.reserved)).toEqual([0, 0])
      const held = await store.reserve('h2', T0 + HOUR, [a, b], [20, 10], T0)
      expect(held.kind).toBe('reserved')
      expect((await store.read([a, b], T0)).map((s) => [s.spent, s.reserved])).toEqual([
        [0, 20],
        [40, 10],
      ])
    })

    test('settling replaces the hold by what was used; a release uses nothing', async () => {
      const { store, key } = subject.open()
      const c = fixed(key('a'), 100)
      await store.seed(c, 0, T0)
      await store.reserve('h1', T0 + HOUR, [c], [30], T0)
      await store.reserve('h2', T0 + HOUR, [c], [30], T0)
      expect(await store.settle('h1', [c], [12], T0 + 1)).toEqual([12])
      expect(await store.settle('h2', [c], [0], T0 + 2)).toEqual([12])
      expect((await store.read([c], T0 + 3))[0]).toMatchObject({ spent: 12, reserved: 0 })
    })

    test('a hold that outlives its expiry stops counting (a crashed instance holds nothing for long)', async () => {
      const { store, key } = subject.open()
      const c = fixed(key('a'), 100)
      await store.seed(c, 0, T0)
      await store.reserve('h1', T0 + 1000, [c], [90], T0)
      expect((await store.reserve('h2', T0 + HOUR, [c], [20], T0 + 999)).kind).toBe('refused')
      expect((await store.reserve('h3', T0 + HOUR, [c], [20], T0 + 1000)).kind).toBe('reserved')
      // Its late settlement still counts the spend.
      expect(await store.settle('h1', [c], [50], T0 + 2000)).toEqual([50])
    })

    test('a new window starts empty and unseeded; a call settled after it began counts in its own', async () => {
      const { store, key } = subject.open()
      const first = fixed(key('a'), 100)
      await store.seed(first, 0, T0)
      await store.reserve('h1', T0 + 2 * HOUR, [first], [40], T0 + HOUR - 1)
      const second: CounterSpec = { ...first, slotStart: T0 + HOUR, countFrom: T0 + HOUR, seedMark: String(T0 + HOUR) }
      expect((await store.reserve('h2', T0 + 2 * HOUR, [second], [10], T0 + HOUR)).kind).toBe('unseeded')
      await store.seed(second, 0, T0 + HOUR)
      await store.settle('h1', [first], [40], T0 + HOUR + 5)
      const [state] = await store.read([second], T0 + HOUR + 10)
      expect(state?.spent).toBe(0)
    })

    test('a sliding window forgets spend once its slot is out of the window, and names the oldest slot', async () => {
      const { store, key } = subject.open()
      const at = (t: number) => sliding(key('v'), 100, t)
      await store.seed(at(T0), 0, T0)
      await store.reserve('h1', T0 + HOUR, [at(T0)], [60], T0)
      await store.settle('h1', [at(T0)], [60], T0)
      await store.reserve('h2', T0 + HOUR, [at(T0 + 5_000)], [30], T0 + 5_000)
      await store.settle('h2', [at(T0 + 5_000)], [30], T0 + 5_000)
      const refused = await store.reserve('h3', T0 + HOUR, [at(T0 + 10_000)], [20], T0 + 10_000)
      expect(refused).toMatchObject({ kind: 'refused', before: [{ spent: 90, oldestSlot: T0 }] })
      // 21 s on, the first slot no longer counts.
      const later = await store.reserve('h4', T0 + HOUR, [at(T0 + 21_000)], [20], T0 + 21_000)
      expect(later).toMatchObject({ kind: 'reserved', before: [{ spent: 30 }] })
    })

    test('a re-seed after the marks were dropped never lowers the count, and raises it to the log', async () => {
      const { store, key } = subject.open()
      const c = fixed(key('a'), 1_000)
      await store.seed(c, 100, T0)
      await store.unseed([c.key])
      expect((await store.read([c], T0))[0]?.seeded).toBe(false)
      await store.seed(c, 50, T0)
      expect((await store.read([c], T0))[0]?.spent).toBe(100)
      await store.unseed([c.key])
      await store.seed(c, 250, T0)
      expect((await store.read([c], T0))[0]?.spent).toBe(250)
    })

    test('amounts are exact whole numbers far beyond a 32-bit integer (nano-USD)', async () => {
      const { store, key } = subject.open()
      const c = fixed(key('a'), 9_000_000_000_000_000)
      await store.seed(c, 1_234_567_890_123_456, T0)
      await store.reserve('h1', T0 + HOUR, [c], [1_000_000_000_000_001], T0)
      expect(await store.settle('h1', [c], [1_000_000_000_000_001], T0)).toEqual([2_234_567_890_123_457])
    })

    test('200 concurrent holds never pass the limit together', async () => {
      const { store, key, peer } = subject.open()
      const c = fixed(key('a'), 1_000)
      await store.seed(c, 0, T0)
      const stores = peer ? [store, peer()] : [store]
      const outcomes = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          (stores[i % stores.length] as SpendStore).reserve(`h${i}`, T0 + HOUR, [c], [30], T0),
        ),
      )
      expect(outcomes.filter((o) => o.kind === 'reserved')).toHaveLength(33)
      expect((await store.read([c], T0))[0]?.reserved).toBe(990)
    })
  })
}
