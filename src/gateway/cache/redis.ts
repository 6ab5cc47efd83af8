import type Redis from 'ioredis'
import type { CircuitBreaker } from '../../util/breaker'
import { type CachedAnswer, MAX_CACHED_ANSWER_BYTES, type ResponseCache } from './store'

export interface RedisResponseCacheOptions {
  /**
   * The breaker of every store on this Redis (runtime.ts): while it is open no call of the cache
   * touches Redis, and a failure the cache meets keeps the others off it too.
   */
  breaker: CircuitBreaker
  /** The largest answer kept, in bytes of its JSON (UTF-8); larger ones are not kept. 4 MiB unless said. */
  maxEntryBytes?: number
  /** What every key starts with; `gw:cache:` unless said (the tests keep theirs apart). */
  prefix?: string
}

/**
 * KEYS: the bucket. ARGV: the answer's JSON, bucketMax, ttlMs. The length check and the push are one
 * step, so instances adding to one bucket at once never take it past bucketMax. A full bucket keeps
 * its expiry: it lapses a ttl after its last answer came, and the next calls fill it afresh.
 */
const ADD = `
if redis.call('LLEN', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`

type CacheRedis = Redis & {
  gwCacheAdd(key: string, json: string, bucketMax: number, ttlMs: number): Promise<number>
}

/**
 * Redis answered, with an error of its own (a full memory, a key of another type): Redis is there, so
 * this call misses and the breaker, which would send every store on Redis to its fallback, is not told.
 */
const isReply = (error: unknown) => error instanceof Error && error.name === 'ReplyError'

/**
 * The cache shared by every instance: a Redis list per key (`<prefix><key>`) of the bucket's answers
 * as JSON, expiring as a whole. While the breaker is open, or when Redis fails a call, a read finds
 * nothing and an add keeps nothing, at no cost per call beyond that of the breaker.
 */
export class RedisResponseCache implements ResponseCache {
  private readonly redis: CacheRedis
  private readonly breaker: CircuitBreaker
  private readonly maxEntryBytes: number
  private readonly prefix: string

  constructor(redis: Redis, options: RedisResponseCacheOptions) {
    redis.defineCommand('gwCacheAdd', { numberOfKeys: 1, lua: ADD })
    this.redis = redis as CacheRedis
    this.breaker = options.breaker
    this.maxEntryBytes = options.maxEntryBytes ?? MAX_CACHED_ANSWER_BYTES
    this.prefix = options.prefix ?? 'gw:cache:'
  }

  async read(key: string): Promise<CachedAnswer[]> {
    const raw = await this.breaker.run(
      () => this.answered(() => this.redis.lrange(this.prefix + key, 0, -1), []),
      async () => [],
    )
    const answers: CachedAnswer[] = []
    for (const entry of raw) {
      const answer = parseAnswer(entry)
      if (answer) answers.push(answer)
    }
    return answers
  }

  async add(key: string, answer: CachedAnswer, ttlMs: number, bucketMax: number): Promise<void> {
    if (!(ttlMs > 0) || !(bucketMax >= 1)) return
    const json = JSON.stringify(answer)
    // A UTF-16 unit is one to three bytes of UTF-8: the length alone settles most answers.
    if (json.length > this.maxEntryBytes) return
    if (json.length * 3 > this.maxEntryBytes && Buffer.byteLength(json) > this.maxEntryBytes) return
    await this.breaker.run(
      () => this.answered(() => this.redis.gwCacheAdd(this.prefix + key, json, Math.floor(bucketMax), Math.ceil(ttlMs)), 0),
      async () => 0,
    )
  }

  /** `call`, or `missed` when Redis answers it with an error (see isReply); any other failure goes to the breaker. */
  private async answered<T>(call: () => Promise<T>, missed: T): Promise<T> {
    try {
      return await call()
    } catch (error) {
      if (isReply(error)) return missed
      throw error
    }
  }
}

/** An answer read back, or undefined when the entry is not one (not JSON, or not of its shape). */
function parseAnswer(entry: string): CachedAnswer | undefined {
  let value: unknown
  try {
    value = JSON.parse(entry)
  } catch {
    return undefined
  }
  if (typeof value !== 'object' || value === null) return undefined
  const v = value as Record<string, unknown>
  if (
    typeof v.status !== 'number' ||
    typeof v.contentType !== 'string' ||
    typeof v.body !== 'string' ||
    typeof v.streamed !== 'boolean' ||
    typeof v.provider !== 'string' ||
    typeof v.model !== 'string' ||
    typeof v.storedAt !== 'number' ||
    // JSON writes a cost that was not a finite number as null: that answer is kept, without its cost.
    (v.costNano !== undefined && v.costNano !== null && typeof v.costNano !== 'number')
  ) {
    return undefined
  }
  return {
    status: v.status,
    contentType: v.contentType,
    body: v.body,
    streamed: v.streamed,
    provider: v.provider,
    model: v.model,
    ...(typeof v.costNano === 'number' ? { costNano: v.costNano } : {}),
    storedAt: v.storedAt,
  }
}
