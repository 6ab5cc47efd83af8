import type { ProviderName } from '../../directory/providers'
import type { CircuitBreaker } from '../../util/breaker'

/**
 * Which provider keys are cooling down: a key that answered 429 or 5xx, or could not be reached, is
 * passed over for a while and then comes back. Ids are provider key ids, or `operatorKeyId(provider)`
 * for a call on the operator's key. What it says is a hint for choosing a key, never a reason to
 * refuse a call (see `pickKey`).
 */
export interface KeyHealth {
  /** The ids among `ids` that are cooling down now. */
  coolingDown(ids: readonly string[]): Promise<ReadonlySet<string>>
  /** Passes `id` over for `ms` from now, replacing any cool-down it had; `ms` of 0 or less ends it. */
  coolDown(id: string, ms: number): Promise<void>
  /** Ends `id`'s cool-down: it answered again. */
  recovered(id: string): Promise<void>
}

/** The id of a provider's endpoint on the operator's key, which cools down like an organisation's key. */
export const operatorKeyId = (provider: ProviderName): string => `operator:${provider}`

/**
 * The longest cool-down kept. A provider's Retry-After of a day would otherwise bench a key for a day
 * after the provider had long forgotten it; an hour is beyond any rate window worth waiting out.
 */
export const MAX_COOLDOWN_MS = 3_600_000

/** A cool-down's length as both stores keep it: whole milliseconds, at most MAX_COOLDOWN_MS; NaN is none. */
export const cooldownMs = (ms: number): number => (ms > 0 ? Math.min(MAX_COOLDOWN_MS, Math.ceil(ms)) : 0)

/**
 * In process: the whole truth for one instance, the fallback of the shared one. Bounded: when full, the
 * id cooled down longest ago goes first (a Map keeps insertion order, and a new cool-down re-inserts).
 * Lapsed entries are dropped when read, and from the old end as new ones come.
 */
export class MemoryKeyHealth implements KeyHealth {
  private readonly until = new Map<string, number>()

  constructor(
    private readonly now: () => number = Date.now,
    private readonly maxIds = 100_000,
  ) {}

  async coolingDown(ids: readonly string[]): Promise<ReadonlySet<string>> {
    const now = this.now()
    const cooling = new Set<string>()
    for (const id of ids) {
      const until = this.until.get(id)
      if (until === undefined) continue
      if (until > now) cooling.add(id)
      else this.until.delete(id)
    }
    return cooling
  }

  async coolDown(id: string, ms: number): Promise<void> {
    const length = cooldownMs(ms)
    this.until.delete(id)
    if (length === 0) return
    const now = this.now()
    for (const [oldest, until] of this.until) {
      if (until > now && this.until.size < this.maxIds) break
      this.until.delete(oldest)
    }
    this.until.set(id, now + length)
  }

  async recovered(id: string): Promise<void> {
    this.until.delete(id)
  }

  /** Ids held, lapsed ones included until they are read or pushed out. */
  get size(): number {
    return this.until.size
  }
}

/**
 * Redis while it answers, so every instance passes over a key one of them saw failing. Every change is
 * also kept in this instance's memory: when Redis goes, the instance still knows the cool-downs it
 * started itself, and the keys it saw failing stay passed over here. Memory is read only while the
 * breaker keeps calls off Redis; while Redis answers it is the one truth, so a key another instance saw
 * recover is used here too.
 */
export class FailoverKeyHealth implements KeyHealth {
  constructor(
    private readonly primary: KeyHealth,
    private readonly fallback: MemoryKeyHealth,
    private readonly breaker: CircuitBreaker,
  ) {}

  get degraded(): boolean {
    return this.breaker.isOpen
  }

  coolingDown(ids: readonly string[]): Promise<ReadonlySet<string>> {
    return this.breaker.run(
      () => this.primary.coolingDown(ids),
      () => this.fallback.coolingDown(ids),
    )
  }

  async coolDown(id: string, ms: number): Promise<void> {
    await this.fallback.coolDown(id, ms)
    await this.breaker.run(
      () => this.primary.coolDown(id, ms),
      async () => undefined,
    )
  }

  async recovered(id: string): Promise<void> {
    await this.fallback.recovered(id)
    await this.breaker.run(
      () => this.primary.recovered(id),
      async () => undefined,
    )
  }
}
