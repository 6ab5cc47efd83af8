import type { ChainRetry, ChainStep, ChainTriggers } from '../store/json-columns'
import type { FallbackChainRow } from '../store/repositories/fallback-chains'
import type { Clock, Store } from '../store/store'
import { TtlCache } from '../util/ttl-cache'
import type { ValueOrPromise } from '../util/value-or-promise'

/** A fallback chain as the gateway follows it: calls naming `matchModel` go to its steps in order. */
export interface FallbackChain {
  id: string
  name: string
  matchModel: string
  steps: readonly ChainStep[]
  triggers: ChainTriggers | null
  retry: ChainRetry | null
}

/** Where the gateway finds an organisation's chains. */
export interface ChainSource {
  /** The chain whose alias is `model`, if the organisation has one. */
  chainFor(orgId: string, model: string): ValueOrPromise<FallbackChain | undefined>
}

/**
 * The statuses a chain moves on after when it names none (any 5xx does too): a model the provider no
 * longer serves, a request it could not take now, and the providers' overloaded answers.
 */
export const DEFAULT_FALLBACK_STATUSES: readonly number[] = [404, 408, 409, 410, 429, 500, 502, 503, 504, 529]

/** Statuses a chain never moves on after: the caller's request is wrong, and every provider will say so. */
export const NEVER_FALLBACK_STATUSES: readonly number[] = [400, 401, 403, 422]

/**
 * The gateway reads chains this fresh: a change is in force at once on the instance that made it, and
 * on the others within a second, with one database read per organisation per second, not per call.
 */
const CHAIN_CACHE_MS = 1_000
/** Organisations whose chains are held at once; the oldest go first. */
const CACHED_ORGS = 100_000

type OrgChains = ReadonlyMap<string, FallbackChain>

const toChain = (row: FallbackChainRow): FallbackChain => ({
  id: row.id,
  name: row.name,
  matchModel: row.matchModel,
  steps: row.steps,
  triggers: row.triggers,
  retry: row.retry,
})

/** The organisations' fallback chains as calls read them, held for a second, forgotten when the module changes one. */
export class Chains implements ChainSource {
  private readonly cache: TtlCache<string, OrgChains | Promise<OrgChains>>

  constructor(
    private readonly store: Store,
    now: Clock = Date.now,
  ) {
    this.cache = new TtlCache(CACHED_ORGS, CHAIN_CACHE_MS, now)
  }

  /**
   * The chain whose alias is `model`: at once when the organisation's chains are held. Concurrent calls
   * of one organisation share one read; a read that fails is not kept, so the next call tries again.
   */
  chainFor(orgId: string, model: string): ValueOrPromise<FallbackChain | undefined> {
    const held = this.cache.held(orgId, () => this.read(orgId))
    return held instanceof Promise ? held.then((chains) => chains.get(model)) : held.get(model)
  }

  forget(orgId: string): void {
    this.cache.delete(orgId)
  }

  private async read(orgId: string): Promise<OrgChains> {
    const rows = await this.store.org(orgId).fallbackChains.list()
    return new Map(rows.map((row) => [row.matchModel, toChain(row)]))
  }
}
