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

/** In-process, bounded: when full, the entry closest to lapsing goes first (insertion order = completion order). */
export class MemoryMetaStore implements MetaStore {
  private readonly entries = new Map<string, { entry: StoredMeta; expiresAt: number }>()

  constructor(
    private readonly maxEntries = 200_000,
    private readonly now: () => number = Date.now,
  ) {}

  async put(entry: StoredMeta, ttlSeconds: number): Promise<void> {
    const key = entry.meta.requestId.toLowerCase()
    this.entries.delete(key)
    while (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next()
      if (oldest.done) break
      this.entries.delete(oldest.value)
    }
    this.entries.set(key, { entry, expiresAt: this.now() + ttlSeconds * 1000 })
  }

  async get(requestId: string): Promise<StoredMeta | undefined> {
    const key = requestId.toLowerCase()
    const found = this.entries.get(key)
    if (!found) return undefined
    if (found.expiresAt <= this.now()) {
      this.entries.delete(key)
      return undefined
    }
    return found.entry
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
