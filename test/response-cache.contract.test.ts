import { afterAll, describe, expect, test } from 'bun:test'
import { createServer } from 'node:net'
import fc from 'fast-check'
import Redis from 'ioredis'
import { cacheKey, readCacheControl, writeCanonical } from '../src/gateway/cache/key'
import { answerBytes, MemoryResponseCache } from '../src/gateway/cache/memory'
import { RedisResponseCache } from '../src/gateway/cache/redis'
import type { CachedAnswer, ResponseCache } from '../src/gateway/cache/store'
import { CircuitBreaker } from '../src/util/breaker'
import { lazyClient, RedisPool, redisUrl } from './support/contract'

/**
 * The response cache's contract, the same for both stores: in process always, with a clock the test
 * holds; Redis whenever GW_TEST_REDIS_URL is set (always in CI), in real time with short lifetimes.
 * Then what only one of them promises: the byte bound and LRU order in process; on Redis, what it does
 * with entries it cannot read and while it is away. And the key the gateway files answers under.
 */

const pool = redisUrl ? new RedisPool(redisUrl) : undefined
afterAll(() => pool?.close())

const T0 = Date.UTC(2026, 0, 1)
/** The in-process store's bound in the contract: an answer of more than 128 KiB is refused. */
const MEMORY_BYTES = 1024 * 1024
/** The Redis store's bound on one answer in the contract. */
const REDIS_ENTRY_BYTES = 64 * 1024

interface Instance {
  cache: ResponseCache
  /** Another instance over the same storage, as a second gw would have; the same one in process. */
  peer: ResponseCache
  /** Lets `ms` pass on the store's clock. */
  advance(ms: number): Promise<void>
}

interface Subject {
  name: string
  runs: boolean
  open(): Instance
}

const subjects: Subject[] = [
  {
    name: 'in process (MemoryResponseCache)',
    runs: true,
    open: () => {
      let now = T0
      const cache = new MemoryResponseCache({ maxBytes: MEMORY_BYTES, now: () => now })
      return {
        cache,
        peer: cache,
        advance: async (ms) => {
          now += ms
        },
      }
    },
  },
  {
    name: 'Redis (RedisResponseCache)',
    runs: pool !== undefined,
    open: () => {
      const prefix = (pool as RedisPool).namespace()
      const options = { breaker: new CircuitBreaker(), maxEntryBytes: REDIS_ENTRY_BYTES, prefix }
      return {
        cache: new RedisResponseCache(lazyClient(pool)(), options),
        peer: new RedisResponseCache(lazyClient(pool)(), { ...options, breaker: new CircuitBreaker() }),
        advance: (ms) => Bun.sleep(ms),
      }
    },
  },
]

let serial = 0
const answer = (body = `{"id":"answer-${++serial}"}`, extra: Partial<CachedAnswer> = {}): CachedAnswer => ({
  status: 200,
  contentType: 'application/json',
  body,
  streamed: false,
  provider: 'openai',
  model: 'gpt-4o',
  costNano: 1_250,
  storedAt: T0,
  ...extra,
})
const keyOf = (orgId: string, body: Record<string, unknown> = { model: 'gpt-4o' }) =>
  cacheKey({ orgId, path: '/v1/chat/completions', body })

for (const subject of subjects) {
  describe.skipIf(!subject.runs)(`response cache: ${subject.name}`, () => {
    test('a key is missed until an answer is added, then found as it was added', async () => {
      const { cache } = subject.open()
      const key = keyOf('org-miss')
      expect(await cache.read(key)).toEqual([])
      const streamed = answer('data: {"x":"€😀\ud800"}\n\ndata: [DONE]\n\n', { streamed: true, contentType: 'text/event-stream' })
      await cache.add(key, streamed, 60_000, 3)
      expect(await cache.read(key)).toEqual([streamed])
      const { costNano: _, ...uncosted } = answer()
      await cache.add(key, uncosted, 60_000, 3)
      expect(await cache.read(key)).toEqual([streamed, uncosted])
    })

    test('a bucket fills to bucketMax and then refuses more', async () => {
      const { cache } = subject.open()
      const key = keyOf('org-bucket')
      const added = Array.from({ length: 5 }, () => answer())
      for (const a of added) await cache.add(key, a, 60_000, 3)
      expect(await cache.read(key)).toEqual(added.slice(0, 3))
    })

    test('instances adding to one bucket at once never take it past bucketMax', async () => {
      const { cache, peer } = subject.open()
      const key = keyOf('org-race')
      await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? cache : peer).add(key, answer(), 60_000, 3)))
      expect(await cache.read(key)).toHaveLength(3)
      expect(await peer.read(key)).toHaveLength(3)
    })

    test('nothing is kept for a lifetime or a bucket of nothing', async () => {
      const { cache } = subject.open()
      const key = keyOf('org-nothing')
      await cache.add(key, answer(), 0, 3)
      await cache.add(key, answer(), 60_000, 0)
      expect(await cache.read(key)).toEqual([])
    })

    test('answers over the bound of one answer are not kept', async () => {
      const { cache } = subject.open()
      const key = keyOf('org-large')
      const small = answer('x'.repeat(30_000))
      await cache.add(key, answer('x'.repeat(200_000)), 60_000, 3)
      await cache.add(key, small, 60_000, 3)
      expect(await cache.read(key)).toEqual([small])
    })

    test('the organisation and the seed name different buckets', async () => {
      const { cache } = subject.open()
      const body = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }
      const kept = answer()
      await cache.add(cacheKey({ orgId: 'org-a', path: '/v1/chat/completions', body }), kept, 60_000, 3)
      expect(await cache.read(cacheKey({ orgId: 'org-b', path: '/v1/chat/completions', body }))).toEqual([])
      expect(await cache.read(cacheKey({ orgId: 'org-a', seed: 's1', path: '/v1/chat/completions', body }))).toEqual([])
      expect(await cache.read(cacheKey({ orgId: 'org-a', seed: '', path: '/v1/chat/completions', body }))).toEqual([kept])
    })

    test('a bucket lapses its ttl after its last answer was added', async () => {
      const { cache, advance } = subject.open()
      const key = keyOf('org-ttl')
      const [first, second] = [answer(), answer()]
      await cache.add(key, first, 200, 3)
      await advance(120)
      await cache.add(key, second, 200, 3)
      await advance(120)
      expect(await cache.read(key)).toEqual([first, second])
      await advance(140)
      expect(await cache.read(key)).toEqual([])
      // A lapsed bucket starts again empty.
      await cache.add(key, first, 200, 1)
      expect(await cache.read(key)).toEqual([first])
    })

    test('an add refused by a full bucket does not keep it longer', async () => {
      const { cache, advance } = subject.open()
      const key = keyOf('org-full-ttl')
      await cache.add(key, answer(), 150, 1)
      await advance(100)
      await cache.add(key, answer(), 150, 1)
      await advance(100)
      expect(await cache.read(key)).toEqual([])
    })
  })
}

describe('response cache: in process only', () => {
  const fixedKey = (i: number) => `key-${String(i).padStart(4, '0')}`
  /** What one key holding one answer of `body` costs, as the store counts it. */
  const costOfOne = async (body: string) => {
    const probe = new MemoryResponseCache({ maxBytes: MEMORY_BYTES })
    await probe.add(fixedKey(0), answer(body), 60_000, 1)
    return probe.bytes
  }

  test('counts an answer as its strings in UTF-16 and a fixed overhead', () => {
    const a = answer('€'.repeat(1_000))
    const b = answer('x'.repeat(1_000))
    expect(answerBytes(a)).toBe(answerBytes(b))
    expect(answerBytes(answer('x'.repeat(2_000))) - answerBytes(b)).toBe(2_000)
  })

  test('evicts the least recently used keys beyond its bound; a read counts as a use', async () => {
    const body = 'x'.repeat(1_000)
    const perKey = await costOfOne(body)
    const cache = new MemoryResponseCache({ maxBytes: perKey * 10 })
    for (let i = 0; i < 10; i++) await cache.add(fixedKey(i), answer(body), 60_000, 1)
    expect(cache.size).toBe(10)
    expect(cache.bytes).toBe(perKey * 10)
    expect(await cache.read(fixedKey(0))).toHaveLength(1)
    await cache.add(fixedKey(10), answer(body), 60_000, 1)
    expect(await cache.read(fixedKey(1))).toEqual([])
    expect(await cache.read(fixedKey(0))).toHaveLength(1)
    await cache.add(fixedKey(11), answer(body), 60_000, 1)
    expect(await cache.read(fixedKey(2))).toEqual([])
    for (const i of [0, 3, 4, 5, 6, 7, 8, 9, 10, 11]) expect(await cache.read(fixedKey(i))).toHaveLength(1)
    expect(cache.bytes).toBeLessThanOrEqual(perKey * 10)
  })

  test('drops expired keys when read, and when an add finds them least recently used', async () => {
    let now = T0
    const body = 'x'.repeat(1_000)
    const perKey = await costOfOne(body)
    const cache = new MemoryResponseCache({ maxBytes: perKey * 10, now: () => now })
    for (let i = 0; i < 10; i++) await cache.add(fixedKey(i), answer(body), i < 5 || i === 7 ? 1_000 : 60_000, 1)
    now += 2_000
    expect(await cache.read(fixedKey(4))).toEqual([])
    expect(cache.size).toBe(9)
    expect(cache.bytes).toBe(perKey * 9)
    // Within the bound, the add stops at the first live key: 7 is expired but waits behind 5 and 6.
    await cache.add(fixedKey(10), answer(body), 60_000, 1)
    expect(cache.size).toBe(6)
    expect(cache.bytes).toBe(perKey * 6)
    expect(await cache.read(fixedKey(7))).toEqual([])
    for (const i of [5, 6, 8, 9, 10]) expect(await cache.read(fixedKey(i))).toHaveLength(1)
  })

  test('keeps an answer up to an eighth of its bound, and a bucket within the bound', async () => {
    const cache = new MemoryResponseCache({ maxBytes: 80_000 })
    const body = 'x'.repeat(4_000)
    expect(answerBytes(answer(body))).toBeLessThanOrEqual(10_000)
    await cache.add('other', answer('y'), 60_000, 1)
    for (let i = 0; i < 20; i++) await cache.add('big', answer(body), 60_000, 100)
    const kept = (await cache.read('big')).length
    expect(kept).toBeGreaterThan(0)
    expect(kept).toBeLessThan(20)
    expect(cache.bytes).toBeLessThanOrEqual(80_000)
    await cache.add('huge', answer('x'.repeat(5_000)), 60_000, 1)
    expect(await cache.read('huge')).toEqual([])
  })

  test('a read answers a copy: changing it changes nothing kept', async () => {
    const cache = new MemoryResponseCache({ maxBytes: MEMORY_BYTES })
    await cache.add('k', answer(), 60_000, 3)
    const read = await cache.read('k')
    read.push(answer())
    expect(await cache.read('k')).toHaveLength(1)
  })
})

describe.skipIf(pool === undefined)('response cache: Redis only', () => {
  test('an answer over maxEntryBytes in UTF-8 is not kept, though its length is under it', async () => {
    const cache = new RedisResponseCache(lazyClient(pool)(), {
      breaker: new CircuitBreaker(),
      maxEntryBytes: REDIS_ENTRY_BYTES,
      prefix: (pool as RedisPool).namespace(),
    })
    const key = keyOf('org-utf8')
    await cache.add(key, answer('€'.repeat(30_000)), 60_000, 3)
    expect(await cache.read(key)).toEqual([])
  })

  test('entries it cannot read are skipped; an error answered by Redis is a miss, not an outage', async () => {
    const client = lazyClient(pool)()
    const prefix = (pool as RedisPool).namespace()
    const breaker = new CircuitBreaker()
    const cache = new RedisResponseCache(client, { breaker, prefix })
    const kept = answer()
    await client.rpush(`${prefix}mixed`, 'not json', '{"status":"200"}', '[]', 'null', JSON.stringify(kept))
    await client.rpush(`${prefix}mixed`, JSON.stringify({ ...kept, costNano: null }))
    await client.pexpire(`${prefix}mixed`, 60_000)
    const { costNano: _, ...uncosted } = kept
    expect(await cache.read('mixed')).toEqual([kept, uncosted])

    await client.set(`${prefix}string`, 'x', 'PX', 60_000)
    expect(await cache.read('string')).toEqual([])
    await cache.add('string', kept, 60_000, 3)
    expect(breaker.isOpen).toBe(false)
  })
})

/** A port nothing listens on: one the system gave out and that was closed again. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  if (address === null || typeof address === 'string') throw new Error('no port')
  return address.port
}

test('with Redis away a read finds nothing at once, an add keeps nothing, and neither asks Redis again', async () => {
  const client = new Redis({
    host: '127.0.0.1',
    port: await closedPort(),
    connectTimeout: 100,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  })
  client.on('error', () => undefined)
  let sent = 0
  const send = client.sendCommand.bind(client)
  client.sendCommand = (...args: Parameters<Redis['sendCommand']>) => {
    sent += 1
    return send(...args)
  }
  try {
    const breaker = new CircuitBreaker({ cooldownMs: 60_000 })
    const cache = new RedisResponseCache(client, { breaker })
    const started = performance.now()
    expect(await cache.read('k')).toEqual([])
    expect(breaker.isOpen).toBe(true)
    const failed = sent
    for (let i = 0; i < 100; i++) {
      expect(await cache.read('k')).toEqual([])
      await cache.add('k', answer(), 60_000, 3)
    }
    expect(sent).toBe(failed)
    expect(performance.now() - started).toBeLessThan(500)
  } finally {
    client.disconnect()
  }
})

describe('cache key', () => {
  const base = { orgId: 'org', path: '/v1/chat/completions' }
  const key = (body: Record<string, unknown>) => cacheKey({ ...base, body })
  const canonical = (value: unknown) => {
    let text = ''
    writeCanonical(value, (chunk) => {
      text += chunk
    })
    return text
  }

  test('is a hex SHA-256', () => {
    expect(key({ a: 1 })).toMatch(/^[0-9a-f]{64}$/)
  })

  test('is the same whatever order the keys came in, at any depth', () => {
    expect(key({ a: 1, b: 2 })).toBe(key({ b: 2, a: 1 }))
    expect(key({ m: [{ x: 1, y: { p: null, q: 'z' } }], n: true })).toBe(key({ n: true, m: [{ y: { q: 'z', p: null }, x: 1 }] }))
    expect(canonical({ b: [1, { d: 1, c: 'x' }], a: true, e: undefined })).toBe('{"a":true,"b":[1,{"c":"x","d":1}]}')
  })

  test('differs for different values, types and orders of arrays', () => {
    const pairs: Array<[Record<string, unknown>, Record<string, unknown>]> = [
      [{ a: 1 }, { a: '1' }],
      [{ a: [1, 2] }, { a: [2, 1] }],
      [{ a: null }, {}],
      [{ a: true }, { a: 'true' }],
      [{ a: 0 }, { a: false }],
      [{ a: [] }, { a: {} }],
      [{ a: { b: 1 } }, { 'a.b': 1 }],
      [{ a: 'x', b: 'y' }, { a: 'x","b":"y' }],
      [{ a: '\ud800' }, { a: '\ufffd' }],
      [{ a: 1 }, { A: 1 }],
    ]
    for (const [one, other] of pairs) expect(key(one)).not.toBe(key(other))
  })

  test('differs for each organisation, seed and path, with no way to move characters between them', () => {
    const body = { a: 1 }
    expect(cacheKey({ orgId: 'a', seed: 'bc', path: '/p', body })).not.toBe(
      cacheKey({ orgId: 'ab', seed: 'c', path: '/p', body }),
    )
    expect(cacheKey({ orgId: 'a', seed: 'b', path: 'c', body })).not.toBe(cacheKey({ orgId: 'a', seed: '', path: 'bc', body }))
    expect(cacheKey({ orgId: 'a', path: '/p', body })).toBe(cacheKey({ orgId: 'a', seed: '', path: '/p', body }))
    expect(cacheKey({ orgId: 'a', path: '/p', body })).not.toBe(cacheKey({ orgId: 'b', path: '/p', body }))
    expect(cacheKey({ orgId: 'a', path: '/p', body })).not.toBe(cacheKey({ orgId: 'a', path: '/q', body }))
  })

  test('writes a JSON value as JSON with its keys sorted, whatever its shape', () => {
    const seed = process.env.GW_FUZZ_SEED ? Number(process.env.GW_FUZZ_SEED) : undefined
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonical(value)
        // As JSON reads it back: -0 is written 0, as JSON.stringify writes it.
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)))
        expect(canonical(JSON.parse(JSON.stringify(value, (_, v) => shuffled(v))))).toBe(text)
      }),
      { numRuns: 500, ...(seed === undefined ? {} : { seed }) },
    )
  })

  test('writes a large body in pieces that make the same text', () => {
    const body = { messages: Array.from({ length: 5_000 }, (_, i) => ({ role: 'user', content: `message ${i}` })) }
    const chunks: string[] = []
    writeCanonical(body, (chunk) => chunks.push(chunk))
    expect(chunks.length).toBeGreaterThan(1)
    expect(chunks.join('')).toBe(JSON.stringify(body, (_, v) => sortedKeys(v)))
  })

  test('does not overflow on bodies nested far deeper than the call stack', () => {
    const depth = 100_000
    let arrays: unknown = 1
    let objects: unknown = 1
    for (let i = 0; i < depth; i++) {
      arrays = [arrays]
      objects = { a: objects }
    }
    const deep = key({ arrays, objects })
    expect(deep).toMatch(/^[0-9a-f]{64}$/)
    expect(key({ arrays: [arrays], objects })).not.toBe(deep)
    const parsed = JSON.parse(`{"x":${'['.repeat(10_000)}${']'.repeat(10_000)}}`) as Record<string, unknown>
    expect(key(parsed)).toMatch(/^[0-9a-f]{64}$/)
  })

  test('refuses a value that contains itself instead of running on', () => {
    const body: Record<string, unknown> = { a: 1 }
    body.self = { inner: body }
    expect(() => key(body)).toThrow(TypeError)
    const shared = { x: 1 }
    expect(key({ a: shared, b: shared })).toBe(key({ a: { x: 1 }, b: { x: 1 } }))
  })
})

/** `value` with its own keys in reverse order, for a JSON.stringify replacer. */
function shuffled(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value
  return Object.fromEntries(Object.entries(value).reverse())
}

/** `value` with its own keys sorted, for a JSON.stringify replacer. */
function sortedKeys(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value
  return Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
}

describe('Cache-Control', () => {
  const cases: Array<[string | null, number | undefined]> = [
    [null, undefined],
    ['', undefined],
    ['max-age=3600', 3600],
    ['MAX-AGE=60', 60],
    ['public, max-age=120, must-revalidate', 120],
    ['private,Max-Age=0', 0],
    ['max-age="300"', 300],
    ['max-age = 30', 30],
    ['no-store', 0],
    ['max-age=3600, no-store', 0],
    ['No-Store, max-age=10', 0],
    ['no-cache', undefined],
    ['max-age', undefined],
    ['max-age=', undefined],
    ['max-age=-1', undefined],
    ['max-age=1.5', undefined],
    ['max-age=1e3', undefined],
    ['max-age=abc', undefined],
    ['max-age="30', undefined],
    ['max-age="30"x', undefined],
    ['max-age=30, max-age=60', 30],
    ['max-age=x, max-age=60', undefined],
    ['ext="a, max-age=5", max-age=7', 7],
    ['ext="no-store", max-age=7', 7],
    ['max-age=99999999999999999999', 2 ** 31],
    ['s-maxage=60', undefined],
  ]
  for (const [header, seconds] of cases) {
    test(`${JSON.stringify(header)} -> ${seconds}`, () => {
      expect(readCacheControl(header)).toBe(seconds)
    })
  }
})
