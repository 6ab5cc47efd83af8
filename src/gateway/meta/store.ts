import type Redis from 'ioredis'
import type { CallAttempt } from '../../store/json-columns'
import type { CircuitBreaker } from '../../util/breaker'

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
  /** The model the caller asked for, when a budget's downgrade served another (`model`). */
  downgradedFrom?: string
  /** Every provider call the request made, in order: retries, other keys, fallback steps. */
  attempts?: CallAttempt[]
  /** Answered from gw's response cache: no provider was called, the request cost nothing. */
  cached?: boolean
  /** What a cached answer saved: the cost of the call that first made it. */
  cacheSavings?: number
}

/** The record and its owner in one entry: its presence is the global marker of spec 4.2. */
export interface StoredMeta {
  orgId: string
  meta: GatewayMeta
}

/**
 * Calls' metadata shared by every instance (Redis), so that any of them answers the lookup for a call
 * another served before its record is written. A single instance has none: its lookup reads the call's
 * record, queued in its request log or written (info.ts), and a call costs nothing here.
 */
export interface MetaStore {
  put(entry: StoredMeta, ttlSeconds: number): Promise<void>
  get(requestId: string): Promise<StoredMeta | undefined>
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

/**
 * Redis while it answers; nothing while the breaker keeps calls off it. This instance's own calls are
 * then found where the lookup looks next, in its request log (queued, then written); a call another
 * instance served during the outage is found once its record reaches the shared database.
 */
export class FailoverMetaStore implements MetaStore {
  constructor(
    private readonly primary: MetaStore,
    private readonly breaker: CircuitBreaker,
  ) {}

  get degraded(): boolean {
    return this.breaker.isOpen
  }

  put(entry: StoredMeta, ttlSeconds: number): Promise<void> {
    return this.breaker.run(
      async () => this.primary.put(entry, ttlSeconds),
      async () => undefined,
    )
  }

  get(requestId: string): Promise<StoredMeta | undefined> {
    return this.breaker.run(
      () => this.primary.get(requestId),
      async () => undefined,
    )
  }
}
