import type { CachedAnswer, ResponseCache } from './store'

export interface MemoryResponseCacheOptions {
  /** The most the kept answers may take, counted as `answerBytes` and `BUCKET_OVERHEAD` say. */
  maxBytes: number
  now?: () => number
}

/**
 * What a kept answer costs beyond its strings: the object, its numbers and flags, its place in its
 * bucket. An estimate, so that many small answers are not counted as free.
 */
const ANSWER_OVERHEAD = 128
/** What a key's bucket costs beyond its key and answers: the Map entry and the bucket object. */
const BUCKET_OVERHEAD = 96

/** What an answer is counted as: its strings as the engine holds them (UTF-16, two bytes a unit) and its overhead. */
export function answerBytes(answer: CachedAnswer): number {
  const units = answer.body.length + answer.contentType.length + answer.provider.length + answer.model.length
  return units * 2 + ANSWER_OVERHEAD
}

interface Bucket {
  answers: CachedAnswer[]
  expiresAt: number
  bytes: number
}

/**
 * The cache of one instance, bounded by the bytes it holds. Least recently used keys go first: the
 * Map's order is the order of use, a key being moved to its end (deleted and set again) when it is
 * read or added to, so the first entries are the ones to evict. An expired bucket is dropped when it
 * is read, or when an add finds it at the cold end.
 *
 * One answer may take at most an eighth of the bound, so that a few large answers cannot push out
 * everything else; a bucket may take the whole bound, never more.
 */
export class MemoryResponseCache implements ResponseCache {
  private readonly buckets = new Map<string, Bucket>()
  private held = 0
  private readonly maxBytes: number
  private readonly now: () => number

  constructor(options: MemoryResponseCacheOptions) {
    if (!(options.maxBytes >= 0)) throw new Error('a response cache needs a bound of 0 bytes or more')
    this.maxBytes = options.maxBytes
    this.now = options.now ?? Date.now
  }

  /** The bytes held, as counted against `maxBytes`; expired buckets count until they are dropped. */
  get bytes(): number {
    return this.held
  }

  /** The keys held, expired ones included until they are dropped. */
  get size(): number {
    return this.buckets.size
  }

  async read(key: string): Promise<CachedAnswer[]> {
    const bucket = this.live(key)
    if (!bucket) return []
    this.buckets.delete(key)
    this.buckets.set(key, bucket)
    return [...bucket.answers]
  }

  async add(key: string, answer: CachedAnswer, ttlMs: number, bucketMax: number): Promise<void> {
    if (!(ttlMs > 0) || !(bucketMax >= 1)) return
    const size = answerBytes(answer)
    if (size > this.maxBytes / 8) return
    const existing = this.live(key)
    if (existing && existing.answers.length >= bucketMax) return
    const bucket = existing ?? { answers: [], expiresAt: 0, bytes: BUCKET_OVERHEAD + key.length * 2 }
    if (bucket.bytes + size > this.maxBytes) return
    bucket.answers.push(answer)
    bucket.bytes += size
    bucket.expiresAt = this.now() + ttlMs
    this.held += existing ? size : bucket.bytes
    this.buckets.delete(key)
    this.buckets.set(key, bucket)
    this.evictBeyond(key)
  }

  /** The bucket of a key unless it has expired; an expired one is dropped on the way. */
  private live(key: string): Bucket | undefined {
    const bucket = this.buckets.get(key)
    if (!bucket) return undefined
    if (bucket.expiresAt > this.now()) return bucket
    this.drop(key, bucket)
    return undefined
  }

  /**
   * Drops the least recently used buckets until the bound holds, and the expired ones it comes to
   * before the first live one within the bound: those at the cold end would otherwise wait for
   * eviction while their bytes count. `keep`, just used, is the most recent and fits the bound alone,
   * so it is never reached.
   */
  private evictBeyond(keep: string): void {
    const now = this.now()
    for (const [key, bucket] of this.buckets) {
      if (key === keep || (this.held <= this.maxBytes && bucket.expiresAt > now)) return
      this.drop(key, bucket)
    }
  }

  private drop(key: string, bucket: Bucket): void {
    this.buckets.delete(key)
    this.held -= bucket.bytes
  }
}
