import { afterAll, describe, expect } from 'bun:test'
import type Redis from 'ioredis'
import type { Decision } from '../src/limits/algorithms'
import { FailoverLimiterStore } from '../src/limits/failover-store'
import { RedisLimiterStore } from '../src/limits/redis-store'
import { type Check, type LimiterStore, MemoryLimiterStore } from '../src/limits/store'
import { CircuitBreaker } from '../src/util/breaker'
import {
  contractTestOf,
  expectBetween,
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
 * The limiter store's contract (spec 8, docs/decisions.md "Rate limiting"), the same for every
 * implementation: in process always, Redis (Lua, Redis's own clock) and the failover wrapper over it
 * whenever GW_TEST_REDIS_URL is set (always in CI), and the failover wrapper working from its
 * in-process fallback as it does while Redis is away.
 *
 * In process the test moves the clock and every figure is exact. On Redis time is the server's: the
 * windows that must move are short (at most 2 s) and the instants are chosen with room either side;
 * where a figure depends on the exact instant, it is checked against the clock read just before and
 * just after (for the manual clock the two are the same, so the check is exact there too).
 *
 * The arithmetic on its own, with exact instants, stays in test/limits.test.ts; a Redis outage and the
 * breaker in test/rate-limits.test.ts, test/redis-outage.test.ts and test/breaker.test.ts.
 */

const HOUR = 3_600_000

interface LimiterInstance {
  store: LimiterStore
  clock: StoreClock
  /** A key of this test's own (all of a test's keys share one hash tag, as an organisation's do). */
  key(name: string): string
  /** Another instance on a connection of its own, sharing this one's state (shared implementations only). */
  peer?: () => LimiterStore
  /** What the test cannot see through the interface: a failover still on Redis, or still off it. */
  verify(): void
}

interface LimiterSubject {
  name: string
  runs: boolean
  /** Whether instances on other connections share the state (then `peer` is given). */
  shared: boolean
  open(): LimiterInstance
}

const pool = redisUrl ? new RedisPool(redisUrl) : undefined
afterAll(() => pool?.close())

const localKeys = () => {
  const tag = crypto.randomUUID()
  return (name: string) => `gw:rl:{${tag}}:${name}`
}
const redisKeys = () => {
  const tag = crypto.randomUUID()
  return (name: string) => `${(pool as RedisPool).root}{${tag}}:${name}`
}

const inProcess = (): LimiterSubject => ({
  name: 'in process (MemoryLimiterStore)',
  runs: true,
  shared: false,
  open() {
    const clock = manualClock()
    return { store: new MemoryLimiterStore(clock.read), clock, key: localKeys(), verify: () => undefined }
  },
})

const onRedis = (): LimiterSubject => {
  const main = lazyClient(pool)
  const other = lazyClient(pool)
  return {
    name: 'Redis (RedisLimiterStore)',
    runs: pool !== undefined,
    shared: true,
    open() {
      return {
        store: new RedisLimiterStore(main()),
        clock: redisClock(main()),
        key: redisKeys(),
        peer: () => new RedisLimiterStore(other()),
        verify: () => undefined,
      }
    },
  }
}

const failoverOnRedis = (): LimiterSubject => {
  const main = lazyClient(pool)
  const other = lazyClient(pool)
  return {
    name: 'failover with Redis answering (FailoverLimiterStore)',
    runs: pool !== undefined,
    shared: true,
    open() {
      const breakers: CircuitBreaker[] = []
      // As runtime.ts wires it: each instance with its own in-process fallback.
      const failover = (client: Redis) => {
        const breaker = new CircuitBreaker()
        breakers.push(breaker)
        return new FailoverLimiterStore(new RedisLimiterStore(client), new MemoryLimiterStore(), breaker)
      }
      return {
        store: failover(main()),
        clock: redisClock(main()),
        key: redisKeys(),
        peer: () => failover(other()),
        // A Redis error would open the breaker and hide behind the fallback: the test was on Redis only if none did.
        verify: () => expect(breakers.map((b) => b.isOpen)).toEqual(breakers.map(() => false)),
      }
    },
  }
}

const failoverDegraded = (): LimiterSubject => ({
  name: 'failover with Redis away (FailoverLimiterStore on its in-process fallback)',
  runs: true,
  shared: false,
  open() {
    const clock = manualClock()
    const primary = unreachable<LimiterStore>(['decide', 'charge'], { name: 'unreachable' })
    // The breaker's own clock stands still: its cooldown never ends, so no call probes the primary.
    const breaker = new CircuitBreaker({ now: () => 0 })
    breaker.trip(new Error('redis is away'))
    return {
      store: new FailoverLimiterStore(primary, new MemoryLimiterStore(clock.read), breaker),
      clock,
      key: localKeys(),
      verify: () => {
        expect(primary.calls).toBe(0)
        expect(breaker.isOpen).toBe(true)
      },
    }
  },
})

const windowCheck = (key: string, limit: number, windowMs: number): Check => ({ kind: 'window', key, limit, windowMs })
const bucketCheck = (key: string, limit: number, windowMs: number, need = 1, take = need): Check => ({
  kind: 'bucket',
  key,
  limit,
  windowMs,
  need,
  take,
})

const one = async (store: LimiterStore, check: Check): Promise<Decision> => (await store.decide([check]))[0] as Decision
const passed = (limit: number, remaining: number): Decision => ({ allowed: true, limit, remaining, retryAfterSeconds: 0 })

/** What `work` answered, and the implementation's clock just before and just after it. */
async function timed<T>(clock: StoreClock, work: () => Promise<T>): Promise<{ value: T; from: number; to: number }> {
  const from = await clock.now()
  const value = await work()
  return { value, from, to: await clock.now() }
}

function limiterStoreContract(subject: LimiterSubject, phase: Phase): void {
  const title = `limiter store contract: ${subject.name}${phase === 'over time' ? ', over time' : ''}`
  describe.skipIf(!subject.runs)(title, () => {
    const contractTest = contractTestOf(subject, phase)

    contractTest(
      'decide answers one decision per check, in the order given, each with its own limit; no checks, no decisions',
      async ({ store, key }) => {
        expect(await store.decide([])).toEqual([])
        const decisions = await store.decide([
          windowCheck(key('a'), 7, HOUR),
          bucketCheck(key('b'), 3, HOUR),
          windowCheck(key('c'), 2, HOUR),
          bucketCheck(key('d'), 10, HOUR, 4, 4),
        ])
        expect(decisions).toEqual([passed(7, 6), passed(3, 2), passed(2, 1), passed(10, 6)])
        expect(store.name).toBeString()
      },
    )

    contractTest(
      'window: up to the limit each request passes, counting down what is left; then refused, uncounted, with Retry-After the rest of the window and as much of the next as the full window still weighs',
      async ({ store, clock, key }) => {
        const windowMs = 60_000
        const start = await clock.within(windowMs, 100, 59_000)
        const check = windowCheck(key('w'), 5, windowMs)
        for (let i = 1; i <= 5; i++) expect(await one(store, check)).toEqual(passed(5, 5 - i))
        // Refused twice the same way: a refused request is not counted.
        for (let i = 0; i < 2; i++) {
          const refused = await timed(clock, () => one(store, check))
          expect(refused.value).toMatchObject({ allowed: false, limit: 5, remaining: 0 })
          // Nothing of the previous window weighs in. At this window's end its five still weigh in full;
          // one more fits once they weigh 4, a fifth of the next window (12 s) later, in whole seconds.
          const fifth = windowMs / 5
          expectBetween(
            refused.value.retryAfterSeconds,
            Math.ceil((start + windowMs + fifth - refused.to) / 1000),
            Math.ceil((start + windowMs + fifth - refused.from) / 1000),
          )
        }
      },
    )

    contractTest(
      'cents: an estimate the bucket cannot cover is refused; the real cost is taken after; below zero it refuses for as long as paying off takes',
      async ({ store, key }) => {
        // 100 cents an hour.
        const cents = (need: number) => bucketCheck(key('cents'), 100, HOUR, need, 0)
        expect(await one(store, cents(150))).toEqual({ allowed: false, limit: 100, remaining: 100, retryAfterSeconds: 1_800 })
        expect(await one(store, cents(60))).toEqual(passed(100, 100))
        await store.charge(key('cents'), 100, HOUR, 130.01)
        // 30.01 cents owed: 1,080.36 s to pay off at 100 an hour. (Owing a whole number of seconds'
        // refill is where the two differ: see "Retry-After ... a whole number of seconds" below.)
        expect(await one(store, cents(0))).toEqual({ allowed: false, limit: 100, remaining: 0, retryAfterSeconds: 1_081 })
      },
    )

    contractTest('charge: a bucket never drawn is charged from full', async ({ store, key }) => {
      await store.charge(key('fresh'), 100, HOUR, 30)
      expect(await one(store, bucketCheck(key('fresh'), 100, HOUR, 71, 0))).toEqual({
        allowed: false,
        limit: 100,
        remaining: 70,
        retryAfterSeconds: 36,
      })
      expect(await one(store, bucketCheck(key('fresh'), 100, HOUR, 70, 0))).toEqual(passed(100, 70))
    })

    // Moved from test/limits.test.ts ("the in-process store"), where it ran on MemoryLimiterStore only.
    contractTest('a request refused by one limit uses up none of the others', async ({ store, clock, key }) => {
      await clock.within(60_000, 0, 59_000)
      const window = { kind: 'window' as const, key: key('w'), limit: 10, windowMs: 60_000 }
      const bucket = { kind: 'bucket' as const, key: key('b'), limit: 1, windowMs: 60_000, need: 1, take: 1 }
      expect((await store.decide([window, bucket])).map((d) => d.allowed)).toEqual([true, true])
      expect((await store.decide([window, bucket])).map((d) => d.allowed)).toEqual([true, false])
      expect((await store.decide([window]))[0]?.remaining).toBe(8)
    })

    contractTest('a request refused by its window takes nothing from its bucket', async ({ store, clock, key }) => {
      await clock.within(60_000, 0, 59_000)
      const window = windowCheck(key('w'), 1, 60_000)
      const bucket = bucketCheck(key('b'), 5, HOUR)
      expect(await store.decide([window, bucket])).toEqual([passed(1, 0), passed(5, 4)])
      const refused = await store.decide([window, bucket])
      expect(refused.map((d) => d.allowed)).toEqual([false, true])
      expect(refused[0]).toMatchObject({ limit: 1, remaining: 0 })
      expect(await store.decide([bucket])).toEqual([passed(5, 3)])
    })

    // Moved from test/rate-limits.test.ts ("200 concurrent requests against a quota of 50": "in-process:
    // exactly 50 pass", and "on Redis": "200 concurrent decisions against a quota of 50: exactly 50 pass").
    contractTest('200 concurrent decisions against a quota of 50: exactly 50 pass', async ({ store, key }) => {
      const check = bucketCheck(key('b'), 50, 3_600_000, 1, 1)
      const decisions = await Promise.all(Array.from({ length: 200 }, () => store.decide([check])))
      expect(decisions.filter(([d]) => d?.allowed).length).toBe(50)
      // Each one admitted saw the count of those before it, and no other.
      const left = decisions.flatMap(([d]) => (d?.allowed ? [d.remaining] : []))
      expect(left.sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i))
    })

    contractTest(
      'concurrent decisions: a window admits exactly its limit, and a request refused by one limit counts in none, under load too',
      async ({ store, clock, key }) => {
        await clock.within(HOUR, 0, HOUR - 2_000)
        const window = windowCheck(key('w'), 50, HOUR)
        const windowed = await Promise.all(Array.from({ length: 200 }, () => store.decide([window])))
        expect(windowed.filter(([d]) => d?.allowed).length).toBe(50)

        const wide = windowCheck(key('wide'), 50, HOUR)
        const narrow = bucketCheck(key('narrow'), 30, HOUR)
        const mixed = await Promise.all(Array.from({ length: 100 }, () => store.decide([wide, narrow])))
        expect(mixed.filter((ds) => ds.every((d) => d.allowed)).length).toBe(30)
        expect(await one(store, wide)).toEqual(passed(50, 19))
      },
    )

    contractTest('keys are independent: what one key counts or owes, another does not', async ({ store, clock, key }) => {
      await clock.within(HOUR, 0, HOUR - 2_000)
      const full = windowCheck(key('full'), 2, HOUR)
      for (let i = 0; i < 2; i++) await one(store, full)
      expect((await one(store, full)).allowed).toBe(false)
      expect(await one(store, windowCheck(key('other'), 2, HOUR))).toEqual(passed(2, 1))

      const drained = bucketCheck(key('drained'), 1, HOUR)
      await one(store, drained)
      expect((await one(store, drained)).allowed).toBe(false)
      expect(await one(store, bucketCheck(key('untouched'), 1, HOUR))).toEqual(passed(1, 0))

      await store.charge(key('owing'), 10, HOUR, 50)
      expect(await one(store, bucketCheck(key('owing'), 10, HOUR, 0, 0))).toMatchObject({ allowed: false })
      expect(await one(store, bucketCheck(key('solvent'), 10, HOUR, 10, 0))).toEqual(passed(10, 10))
    })

    // Only a store shared across instances can enforce one limit for all of them.
    contractTest(
      'shared: instances on connections of their own enforce one limit, and see each other’s charges and windows',
      async (instance) => {
        const { store, key, clock } = instance
        const peer = (instance.peer as () => LimiterStore)()
        await clock.within(HOUR, 0, HOUR - 2_000)
        const bucket = bucketCheck(key('b'), 4, HOUR)
        const decisions = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? store : peer).decide([bucket])))
        expect(decisions.filter(([d]) => d?.allowed).length).toBe(4)

        await store.charge(key('cents'), 10, HOUR, 3)
        expect(await one(peer, bucketCheck(key('cents'), 10, HOUR, 8, 0))).toMatchObject({ allowed: false, remaining: 7 })

        const window = windowCheck(key('w'), 3, HOUR)
        expect(await one(store, window)).toEqual(passed(3, 2))
        expect(await one(peer, window)).toEqual(passed(3, 1))
        expect(await one(store, window)).toEqual(passed(3, 0))
        expect((await one(peer, window)).allowed).toBe(false)
      },
      { sharedOnly: true },
    )

    // Over time: these wait on the implementation's clock.

    contractTest(
      'window: the next window still counts the previous one in proportion to its overlap; two windows on, nothing of it',
      async ({ store, clock, key }) => {
        const windowMs = 500
        await clock.within(windowMs, 0, 350)
        const check = windowCheck(key('slide'), 4, windowMs)
        for (let i = 1; i <= 4; i++) expect(await one(store, check)).toEqual(passed(4, 4 - i))
        for (let i = 0; i < 3; i++)
          expect(await one(store, check)).toEqual({ allowed: false, limit: 4, remaining: 0, retryAfterSeconds: 1 })
        // 54 % into the next window (anywhere from 50 to 75 % answers the same): 46 % of the 4 counted
        // still weigh, 1.84; the refusals above weigh nothing.
        await clock.toNextWindow(windowMs, 270)
        expect(await one(store, check)).toEqual(passed(4, 1))
        expect(await one(store, check)).toEqual(passed(4, 0))
        expect(await one(store, check)).toEqual({ allowed: false, limit: 4, remaining: 0, retryAfterSeconds: 1 })
        // Two windows after those two, nothing of them is left.
        await clock.toNextWindow(windowMs, 10)
        await clock.toNextWindow(windowMs, 10)
        expect(await one(store, check)).toEqual(passed(4, 3))
      },
      { waits: true },
    )

    contractTest(
      'bucket: capacity is the quota; the quota-th draw passes, the next is refused; it refills at quota per window, never beyond capacity, a charge included',
      async ({ store, clock, key }) => {
        // 3 per 600 ms: a token every 200 ms.
        const check = bucketCheck(key('b'), 3, 600)
        const charged = bucketCheck(key('charged'), 3, 600)
        for (let i = 1; i <= 3; i++) expect(await store.decide([check, charged])).toEqual([passed(3, 3 - i), passed(3, 3 - i)])
        expect(await one(store, check)).toEqual({ allowed: false, limit: 3, remaining: 0, retryAfterSeconds: 1 })
        await clock.advance(100)
        expect(await one(store, check)).toEqual({ allowed: false, limit: 3, remaining: 0, retryAfterSeconds: 1 })
        // A token and a quarter since the last draw: one passes, nothing is left.
        await clock.advance(150)
        expect(await one(store, check)).toEqual(passed(3, 0))
        // Longer than it takes to fill: the bucket holds its capacity, no more, and so does a charge on a rested bucket.
        await clock.advance(900)
        expect(await one(store, check)).toEqual(passed(3, 2))
        await store.charge(charged.key, 3, 600, 1)
        expect(await one(store, charged)).toEqual(passed(3, 1))
      },
      { waits: true },
    )

    contractTest(
      "cents: a balance below zero refuses until the bucket's rate has paid it off",
      async ({ store, clock, key }) => {
        // 100 cents a second is 0.1 a ms: 130 taken from a full bucket leaves 30 owed, 300 ms to pay off.
        const quick = bucketCheck(key('quick'), 100, 1_000, 0, 0)
        const charge = await timed(clock, () => store.charge(quick.key, 100, 1_000, 130))
        expect(await one(store, quick)).toEqual({ allowed: false, limit: 100, remaining: 0, retryAfterSeconds: 1 })
        await clock.advance(150)
        expect(await one(store, quick)).toMatchObject({ allowed: false, remaining: 0 })
        await clock.advance(250)
        const paid = await timed(clock, () => one(store, quick))
        expect(paid.value.allowed).toBe(true)
        expectBetween(
          paid.value.remaining,
          Math.floor(-30 + (paid.from - charge.to) * 0.1),
          Math.floor(-30 + (paid.to - charge.from) * 0.1),
        )
      },
      { waits: true },
    )

    contractTest(
      "charge: a debt deeper than one window's refill is still owed after that window, until refilled",
      async ({ store, clock, key }) => {
        // 10 per 500 ms is 0.02 a ms: 30 taken from a full bucket leaves 20 owed, 1,000 ms to pay off.
        const check = bucketCheck(key('debt'), 10, 500)
        const charge = await timed(clock, () => store.charge(check.key, 10, 500, 30))
        expect(await one(store, check)).toMatchObject({ allowed: false, remaining: 0 })
        await clock.advance(600)
        expect(await one(store, check)).toEqual({ allowed: false, limit: 10, remaining: 0, retryAfterSeconds: 1 })
        await clock.advance(500)
        const paid = await timed(clock, () => one(store, check))
        expect(paid.value.allowed).toBe(true)
        expectBetween(
          paid.value.remaining,
          Math.floor(-20 + (paid.from - charge.to) * 0.02 - 1),
          Math.floor(-20 + (paid.to - charge.from) * 0.02 - 1),
        )
      },
      { waits: true },
    )

    contractTest(
      'Retry-After: a full window is passed by a retry after it',
      async ({ store, clock, key }) => {
        // 2 a second, both taken early in a window: a retry passes once half of them have faded, halfway
        // into the next window, not at its start.
        const windowMs = 1_000
        await clock.within(windowMs, 20, 300)
        const check = windowCheck(key('w'), 2, windowMs)
        for (let i = 0; i < 2; i++) await one(store, check)
        const refused = await one(store, check)
        expect(refused.allowed).toBe(false)
        await clock.advance(refused.retryAfterSeconds * 1000)
        expect((await one(store, check)).allowed).toBe(true)
      },
      { waits: true },
    )

    contractTest(
      'Retry-After: a bucket that owes a whole number of seconds of refill is passed by a retry after it',
      async ({ store, clock, key }) => {
        // 100 per 2 s is 0.05 a ms: 150 taken from a full bucket leaves 50 owed, exactly 1 s to pay off
        // (within the window, so the bucket is still there when the retry comes).
        const check = bucketCheck(key('b'), 100, 2_000, 0, 0)
        await store.charge(check.key, 100, 2_000, 150)
        const refused = await one(store, check)
        expect(refused.allowed).toBe(false)
        await clock.advance(refused.retryAfterSeconds * 1000)
        expect((await one(store, check)).allowed).toBe(true)
      },
      { waits: true },
    )
  })
}

const subjects = [inProcess(), onRedis(), failoverOnRedis(), failoverDegraded()]
for (const subject of subjects) limiterStoreContract(subject, 'at once')
for (const subject of subjects) limiterStoreContract(subject, 'over time')
