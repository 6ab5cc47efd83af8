import { afterAll, describe, expect } from 'bun:test'
import type Redis from 'ioredis'
import { FailoverMetaStore, type MetaStore, RedisMetaStore, type StoredMeta } from '../src/gateway/meta/store'
import { CircuitBreaker } from '../src/util/breaker'
import { contractTestOf, lazyClient, type Phase, RedisPool, redisClock, redisUrl, type StoreClock } from './support/contract'

/**
 * The shared metadata store's contract (spec 4.2), the same for every implementation: Redis, and the
 * failover wrapper over it, whenever GW_TEST_REDIS_URL is set (always in CI). A single instance has no
 * store (the lookup reads the request log: test/meta.test.ts); the failover while Redis is away keeps
 * nothing (test/redis-outage.test.ts).
 */

interface MetaInstance {
  store: MetaStore
  clock: StoreClock
  /** Another namespace: a store of the same kind that shares nothing with this one. */
  elsewhere(): MetaStore
  /** Another instance on a connection of its own, sharing this one's entries (shared implementations only). */
  peer?: () => MetaStore
  /** What the test cannot see through the interface: a failover still on Redis, or still off it. */
  verify(): void
}

interface MetaSubject {
  name: string
  runs: boolean
  /** Whether instances on other connections share the entries (then `peer` is given). */
  shared: boolean
  open(): MetaInstance
}

const pool = redisUrl ? new RedisPool(redisUrl) : undefined
afterAll(() => pool?.close())

const onRedis = (): MetaSubject => {
  const main = lazyClient(pool)
  const other = lazyClient(pool)
  return {
    name: 'Redis (RedisMetaStore)',
    runs: pool !== undefined,
    shared: true,
    open() {
      const prefix = (pool as RedisPool).namespace()
      return {
        store: new RedisMetaStore(main(), prefix),
        clock: redisClock(main()),
        elsewhere: () => new RedisMetaStore(main(), (pool as RedisPool).namespace()),
        peer: () => new RedisMetaStore(other(), prefix),
        verify: () => undefined,
      }
    },
  }
}

const failoverOnRedis = (): MetaSubject => {
  const main = lazyClient(pool)
  const other = lazyClient(pool)
  return {
    name: 'failover with Redis answering (FailoverMetaStore)',
    runs: pool !== undefined,
    shared: true,
    open() {
      const prefix = (pool as RedisPool).namespace()
      const breakers: CircuitBreaker[] = []
      // As runtime.ts wires it, each instance with its own breaker; a prefix per test.
      const failover = (client: Redis, namespace: string) => {
        const breaker = new CircuitBreaker()
        breakers.push(breaker)
        return new FailoverMetaStore(new RedisMetaStore(client, namespace), breaker)
      }
      return {
        store: failover(main(), prefix),
        clock: redisClock(main()),
        elsewhere: () => failover(main(), (pool as RedisPool).namespace()),
        peer: () => failover(other(), prefix),
        // A Redis error would open the breaker and hide behind it: the test was on Redis only if none did.
        verify: () => expect(breakers.map((b) => b.isOpen)).toEqual(breakers.map(() => false)),
      }
    },
  }
}

const bare = (requestId: string, orgId = 'org-a'): StoredMeta => ({
  orgId,
  meta: { requestId, provider: 'openai', model: 'gpt-4o', status: 'success' },
})

/** Every field of GatewayMeta set, fractions and text beyond ASCII included. */
const full = (requestId: string, orgId = 'org-a'): StoredMeta => ({
  orgId,
  meta: {
    requestId,
    provider: 'anthropic',
    model: 'claude-sonnet-4-5',
    status: 'error',
    requestCost: 0.000_123_456_789,
    estimatedCost: 0.5,
    creditsRemaining: 9_876.543_210_12,
    gatewayMode: 'translated',
    translationWarning: 'dropped: “temperature” (ünïcödé ✓ 🚀), "quotes" and \\ backslashes',
  },
})

const uuid = () => crypto.randomUUID()

function metaStoreContract(subject: MetaSubject, phase: Phase): void {
  const title = `metadata store contract: ${subject.name}${phase === 'over time' ? ', over time' : ''}`
  describe.skipIf(!subject.runs)(title, () => {
    const contractTest = contractTestOf(subject, phase)

    contractTest('put then get answers the entry as it was put: its owner and every field', async ({ store }) => {
      const entries = [full(uuid(), 'org-full'), bare(uuid(), 'org-bare')]
      for (const entry of entries) await store.put(entry, 60)
      for (const entry of entries) expect(await store.get(entry.meta.requestId)).toStrictEqual(entry)
    })

    contractTest("finds an id whatever its case, and never another organisation's entry under it", async ({ store }) => {
      const id = '01a204e3-9cb1-4355-93e8-7d7423609d49'
      await store.put({ orgId: 'a', meta: bare(id).meta }, 300)
      expect(await store.get(id.toUpperCase())).toEqual({ orgId: 'a', meta: bare(id).meta })
      expect(await store.get('01a204e3-9cb1-4355-93e8-7d7423609d4a')).toBeUndefined()
    })

    contractTest('an id put in capitals is found in lower case, and the entry keeps the id as it was put', async ({ store }) => {
      const id = uuid().toUpperCase()
      await store.put(full(id), 60)
      expect(await store.get(id.toLowerCase())).toStrictEqual(full(id))
    })

    contractTest('an id never put is undefined', async ({ store }) => {
      expect(await store.get(uuid())).toBeUndefined()
      await store.put(bare(uuid()), 60)
      expect(await store.get(uuid())).toBeUndefined()
    })

    contractTest("each entry answers with its own owner: two organisations' requests never cross", async ({ store }) => {
      const ofA = uuid()
      const ofB = uuid()
      await store.put(full(ofA, 'org-a'), 60)
      await store.put(full(ofB, 'org-b'), 60)
      expect((await store.get(ofA))?.orgId).toBe('org-a')
      expect((await store.get(ofB))?.orgId).toBe('org-b')
      expect((await store.get(ofA))?.meta.requestId).toBe(ofA)
      expect((await store.get(ofB))?.meta.requestId).toBe(ofB)
    })

    contractTest('a second put of the same id replaces the entry, whatever the case of the id', async ({ store }) => {
      const id = uuid()
      await store.put(bare(id, 'org-first'), 60)
      await store.put(full(id.toUpperCase(), 'org-second'), 60)
      expect(await store.get(id)).toStrictEqual(full(id.toUpperCase(), 'org-second'))
    })

    contractTest('concurrent puts and gets: every entry lands and is found', async ({ store }) => {
      const entries = Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? full : bare)(uuid(), `org-${i % 7}`))
      await Promise.all(entries.map((entry) => store.put(entry, 60)))
      const found = await Promise.all(entries.map((entry) => store.get(entry.meta.requestId)))
      expect(found).toStrictEqual(entries)
    })

    contractTest("stores in separate namespaces see nothing of each other's entries", async ({ store, elsewhere }) => {
      const other = elsewhere()
      const id = uuid()
      await store.put(full(id, 'org-here'), 60)
      expect(await other.get(id)).toBeUndefined()
      await other.put(bare(id, 'org-there'), 60)
      expect(await store.get(id)).toStrictEqual(full(id, 'org-here'))
      expect(await other.get(id)).toStrictEqual(bare(id, 'org-there'))
    })

    // Over time: these wait on the implementation's clock.

    contractTest(
      'an entry lapses after its own lifetime; a replacement lives its own; lapsed ones stay gone as new ones come',
      async ({ store, clock }) => {
        const [short, replaced, long, later] = [uuid(), uuid(), uuid(), uuid()]
        await store.put(bare(short, 'org-short'), 1)
        await store.put(bare(replaced, 'org-first'), 1)
        await store.put(bare(replaced, 'org-replacement'), 2)
        await store.put(bare(long, 'org-long'), 2)
        await clock.advance(500)
        expect(await store.get(short)).toEqual(bare(short, 'org-short'))
        expect(await store.get(replaced)).toEqual(bare(replaced, 'org-replacement'))
        await clock.advance(600)
        expect(await store.get(short)).toBeUndefined()
        expect(await store.get(replaced)).toEqual(bare(replaced, 'org-replacement'))
        expect(await store.get(long)).toEqual(bare(long, 'org-long'))
        await store.put(bare(later, 'org-later'), 1)
        expect(await store.get(later)).toEqual(bare(later, 'org-later'))
        expect(await store.get(short)).toBeUndefined()
        expect(await store.get(replaced)).toEqual(bare(replaced, 'org-replacement'))
      },
      { waits: true },
    )

    // Only an implementation shared across instances can answer for another instance's request.
    contractTest(
      'shared: another instance, on a connection of its own, answers for what this one put, and sees it lapse',
      async (instance) => {
        const { store, clock } = instance
        const peer = (instance.peer as () => MetaStore)()
        const [mine, theirs, brief] = [uuid(), uuid(), uuid()]
        await store.put(full(mine, 'org-a'), 60)
        await peer.put(bare(theirs.toUpperCase(), 'org-b'), 60)
        await store.put(bare(brief), 1)
        expect(await peer.get(mine.toUpperCase())).toStrictEqual(full(mine, 'org-a'))
        expect(await store.get(theirs)).toStrictEqual(bare(theirs.toUpperCase(), 'org-b'))
        expect(await peer.get(brief)).toEqual(bare(brief))
        await clock.advance(1_100)
        expect(await peer.get(brief)).toBeUndefined()
      },
      { waits: true, sharedOnly: true },
    )
  })
}

const subjects = [onRedis(), failoverOnRedis()]
for (const subject of subjects) metaStoreContract(subject, 'at once')
for (const subject of subjects) metaStoreContract(subject, 'over time')
