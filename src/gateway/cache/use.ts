import { NANO_PER_USD } from '../../money/cost'
import type { Dispatch } from '../call'
import type { GatewayMeta } from '../meta/store'
import { type CacheRequest, readCacheRequest } from './headers'
import { cacheKey } from './key'
import type { CachedAnswer, ResponseCache } from './store'

/** The response cache as one call uses it: what the caller asked of it, and the call's key. */
export interface CacheUse {
  ask: CacheRequest
  key: string
}

/**
 * The response cache on a call's path: asked before the provider when the caller says so, and given
 * the answer afterwards. The cache failing is a miss, never the caller's error.
 */
export class CallCache {
  constructor(
    private readonly cache: ResponseCache,
    private readonly random: () => number,
    private readonly now: () => number,
  ) {}

  /** What the caller asks of the cache; nothing for raw answers (audio) and uploads, which are never kept. */
  use({ call, route, read, state }: Dispatch): CacheUse | undefined {
    if (route.answer !== 'provider' || read.multipart) return undefined
    const ask = readCacheRequest(call.request.headers)
    if (!ask) return undefined
    // The path as called: Gemini's names the model and the method, which its body does not.
    return { ask, key: cacheKey({ orgId: state.facts.principal.orgId, seed: ask.seed, path: state.facts.path, body: read.body }) }
  }

  /** The answers kept for a call; one of a full bucket, at random. */
  async lookup(use: CacheUse): Promise<CachedAnswer | undefined> {
    const kept = await this.cache.read(use.key).catch((): CachedAnswer[] => [])
    if (kept.length === 0 || kept.length < use.ask.bucketMax) return undefined
    return kept[Math.floor(this.random() * kept.length)]
  }

  /** Keeps a successful answer for later identical calls, off the answer's path. */
  keep(use: CacheUse, meta: GatewayMeta, answer: Pick<CachedAnswer, 'status' | 'contentType' | 'body' | 'streamed'>): void {
    if (!use.ask.save || answer.status !== 200) return
    const costNano = meta.requestCost === undefined ? undefined : Math.round(meta.requestCost * NANO_PER_USD)
    const entry: CachedAnswer = { ...answer, provider: meta.provider, model: meta.model, costNano, storedAt: this.now() }
    void this.cache.add(use.key, entry, use.ask.ttlMs, use.ask.bucketMax).catch(() => undefined)
  }
}
