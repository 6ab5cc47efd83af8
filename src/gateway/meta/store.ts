import type Redis from 'ioredis'

/** Spec 2.1: what a finished request reports, in the `gw` frame and through the lookup. */
export interface GatewayMeta {
  requestId: string
  provider: string
  model: string
  status: 'success' | 'error'
  requestCost?: number
  estimatedCost?: number
  creditsRemaining?: number
  gatewayMode?: 'passthrough' | 'translated'
  translationWarning?: string
}

/** The record and its owner in one entry: its presence is the global marker of spec 4.2. */
export interface StoredMeta {
  orgId: string
  meta: GatewayMeta
}

export interface MetaStore {
  put(entry: StoredMeta, ttlSeconds: number): Promise<void>
  get(requestId: string): Promise<StoredMeta | undefined>
}

/**
 * In-process, bounded. Entries are kept as JSON text, one string each: a long-lived map of hundreds of
 * thousands of small objects is what the garbage collector walks on every full collection. Every entry
 * lives the same time, so insertion order is expiry order: lapsed entries are dropped from the front
 * as new ones come, and when full the one closest to lapsing goes first.
 */
export class MemoryMetaStore implements MetaStore {
  private readonly entries = new Map<string, { orgId: string; meta: string; expiresAt: number }>()

  constructor(
    private readonly maxEntries = 200_000,
    private readonly now: () => number = Date.now,
  ) {}

  async put(entry: StoredMeta, ttlSeconds: number): Promise<void> {
    const now = this.now()
    const key = entry.meta.requestId.toLowerCase()
    this.entries.delete(key)
    for (const [oldest, { expiresAt }] of this.entries) {
      if (expiresAt > now && this.entries.size < this.maxEntries) break
      this.entries.delete(oldest)
    }
    this.entries.set(key, { orgId: entry.orgId, meta: JSON.stringify(entry.meta), expiresAt: now + ttlSeconds * 1000 })
  }

  async get(requestId: string): Promise<StoredMeta | undefined> {
    const key = requestId.toLowerCase()
    const found = this.entries.get(key)
    if (!found) return undefined
    if (found.expiresAt <= this.now()) {
      this.entries.delete(key)
      return undefined
    }
    return { orgId: found.orgId, meta: JSON.parse(found.meta) as GatewayMeta }
  }

  get size(): number {
    return this.entries.size
  }
}

/** Shared by every instance: one key per request with Redis's own expiry, so any instance answers for any other. */
export class RedisMetaStore implements MetaStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'gw:meta:',
  ) {}

  async put(entry: StoredMeta, ttlSeconds: number): Promise<void> {
    await this.redis.set(`${this.prefix}${entry.meta.requestId.toLowerCase()}`, JSON.stringify(entry), 'EX', ttlSeconds)
  }

  async get(requestId: string): Promise<StoredMeta | undefined> {
    const raw = await this.redis.get(`${this.prefix}${requestId.toLowerCase()}`)
    return raw === null ? undefined : (JSON.parse(raw) as StoredMeta)
  }
}
