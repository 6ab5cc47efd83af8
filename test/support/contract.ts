import { expect, test } from 'bun:test'
import Redis from 'ioredis'
import { serviceUrl } from './services'

/**
 * What the contract suites of the scaled interfaces (metadata store, limiter store, invalidation bus)
 * share: the Redis they run against, the clock of each implementation, and a key namespace per run.
 *
 * Redis runs when GW_TEST_REDIS_URL is set; with GW_TEST_REQUIRE_SERVICES=1 a missing URL fails the
 * file instead of skipping the Redis half (test/support/services.ts).
 */
export const redisUrl = serviceUrl('GW_TEST_REDIS_URL')

/**
 * The time an implementation keeps, as a test moves through it. In process the test holds the clock
 * and every instant is exact (`manual`); on Redis the server keeps it (TIME), the test can only wait,
 * and the suites choose their instants with room to spare either side.
 */
export interface StoreClock {
  readonly manual: boolean
  /** The implementation's current time, in ms. */
  now(): Promise<number>
  /** Lets `ms` pass on the implementation's clock. */
  advance(ms: number): Promise<void>
  /** Moves to `offset` ms into the window of `windowMs` after the current one; answers that window's start. */
  toNextWindow(windowMs: number, offset: number): Promise<number>
  /**
   * Makes sure the clock stands between `earliest` and `latest` ms into a window of `windowMs` and
   * answers that window's start. A manual clock is put at `earliest` of the next window; a real one
   * stays where it is when that is inside the span, and otherwise waits for the next window's `earliest`.
   */
  within(windowMs: number, earliest: number, latest: number): Promise<number>
}

/** Midnight, 1 January 2026 (UTC): the start of a window of every length the suites use. */
const EPOCH = Date.UTC(2026, 0, 1)

/** A clock the test moves by hand: `read` is what the implementation is given as its `now`. */
export function manualClock(): StoreClock & { read: () => number } {
  let value = EPOCH
  const startOf = (windowMs: number) => Math.floor(value / windowMs) * windowMs
  return {
    manual: true,
    read: () => value,
    now: async () => value,
    advance: async (ms) => {
      value += ms
    },
    toNextWindow: async (windowMs, offset) => {
      const start = startOf(windowMs) + windowMs
      value = start + offset
      return start
    },
    within: async (windowMs, earliest) => {
      const start = startOf(windowMs) + windowMs
      value = start + earliest
      return start
    },
  }
}

/** Redis's own clock, read with TIME; the test waits for it to move. */
export function redisClock(redis: Redis): StoreClock {
  const now = async () => {
    const [seconds, micros] = await redis.time()
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)
  }
  const waitUntil = async (target: number) => {
    for (let at = await now(); at < target; at = await now()) await Bun.sleep(target - at)
  }
  return {
    manual: false,
    now,
    advance: (ms) => Bun.sleep(ms),
    toNextWindow: async (windowMs, offset) => {
      const start = Math.floor((await now()) / windowMs) * windowMs + windowMs
      await waitUntil(start + offset)
      return start
    },
    within: async (windowMs, earliest, latest) => {
      const at = await now()
      const start = Math.floor(at / windowMs) * windowMs
      if (at >= start + earliest && at <= start + latest) return start
      const next = at < start + earliest ? start : start + windowMs
      await waitUntil(next + earliest)
      return next
    },
  }
}

/**
 * The Redis connections of one suite, all closed in its afterAll, and the keys it wrote, deleted there
 * too (the shared Redis is never flushed: every key of a run lives under its own `root`).
 */
export class RedisPool {
  readonly root = `gw:test:contract:${crypto.randomUUID()}:`
  private readonly clients: Redis[] = []

  constructor(private readonly url: string) {}

  client(): Redis {
    const client = new Redis(this.url)
    this.clients.push(client)
    return client
  }

  /** A namespace of its own for one test, under the run's root. */
  namespace(): string {
    return `${this.root}${crypto.randomUUID()}:`
  }

  async close(): Promise<void> {
    const [first] = this.clients
    if (first) {
      let cursor = '0'
      do {
        const [next, keys] = await first.scan(cursor, 'MATCH', `${this.root}*`, 'COUNT', 1_000)
        if (keys.length > 0) await first.del(...keys)
        cursor = next
      } while (cursor !== '0')
    }
    for (const client of this.clients) client.disconnect()
    this.clients.length = 0
  }
}

/** A client of the pool made when first asked for: a subject whose suite is skipped (no pool) opens none. */
export function lazyClient(pool: RedisPool | undefined): () => Redis {
  let client: Redis | undefined
  return () => {
    if (!pool) throw new Error('this suite has no Redis')
    client ??= pool.client()
    return client
  }
}

/** Asserts `value` is within [low, high]: exactly `low` when the two are the same (a manual clock). */
export function expectBetween(value: number, low: number, high: number): void {
  if (low === high) {
    expect(value).toBe(low)
    return
  }
  expect(value).toBeGreaterThanOrEqual(Math.min(low, high))
  expect(value).toBeLessThanOrEqual(Math.max(low, high))
}

/**
 * Each subject's tests in two phases: first what happens at once, subject after subject; then, side by
 * side for every subject, what waits on the implementation's clock (on Redis, real time). So the waits
 * overlap, and no burst of another test delays the instants a waiting test has chosen.
 */
export type Phase = 'at once' | 'over time'

/**
 * The contract test of one subject in one phase: a test on a fresh instance, checked afterwards for
 * what it cannot see itself. What only a shared implementation promises is not asked of one that is not.
 */
export function contractTestOf<Instance extends { verify(): void }>(
  subject: { shared: boolean; open(): Instance },
  phase: Phase,
) {
  return (name: string, body: (instance: Instance) => Promise<void>, options: { waits?: boolean; sharedOnly?: boolean } = {}) => {
    if ((options.waits === true) !== (phase === 'over time')) return
    if (options.sharedOnly === true && !subject.shared) return
    const runner = options.waits ? test.concurrent : test
    runner(name, async () => {
      const instance = subject.open()
      await body(instance)
      instance.verify()
    })
  }
}

/**
 * A primary that must never be called (the breaker in front of it is held open for good): each of
 * `methods` counts the call and fails, so a test can assert `calls` stayed 0.
 */
export function unreachable<Store extends object>(
  methods: ReadonlyArray<keyof Store>,
  fields: Partial<Store> = {},
): Store & { calls: number } {
  const primary: Record<PropertyKey, unknown> & { calls: number } = { ...fields, calls: 0 }
  for (const method of methods) {
    primary[method] = async () => {
      primary.calls += 1
      throw new Error('unreachable')
    }
  }
  // The methods listed are the interface's; the cast says so to the compiler.
  return primary as unknown as Store & { calls: number }
}
