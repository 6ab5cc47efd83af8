/** The largest answer the cache keeps unless a store is told otherwise: a stream longer than this is not buffered to be kept. */
export const MAX_CACHED_ANSWER_BYTES = 4 * 1024 * 1024

/**
 * One answer kept by the response cache: what the caller was sent, and what it cost to make, so a hit
 * can say what it saved.
 */
export interface CachedAnswer {
  status: number
  contentType: string
  /** The answer's bytes as the caller was sent them, in the caller's format: JSON, or a whole event stream. */
  body: string
  streamed: boolean
  provider: string
  model: string
  /** What the provider charged for it, when known. */
  costNano?: number
  /** When it was stored (ms since the epoch). */
  storedAt: number
}

/**
 * Where answers are kept, by key (a hash naming the organisation, seed, path and body). A key holds a
 * bucket of up to `bucketMax` different answers; a full bucket is served at random.
 */
export interface ResponseCache {
  /** The answers kept under a key that have not expired; [] when none (or the store cannot be reached). */
  read(key: string): Promise<CachedAnswer[]>
  /**
   * Adds an answer to a key's bucket unless it is already full (`bucketMax` answers), and keeps the
   * bucket `ttlMs` from now. Never throws: a cache that cannot keep an answer just misses next time.
   */
  add(key: string, answer: CachedAnswer, ttlMs: number, bucketMax: number): Promise<void>
}
