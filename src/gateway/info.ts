import type { Principal } from '../auth/principal'
import { notFound } from '../errors'
import { PRICE_TABLE } from '../money/prices'
import type { Store } from '../store/store'
import type { GatewayMeta, MetaStore } from './meta/store'
import type { ProviderCredentials, ProviderName } from './providers/provider'
import { PROVIDERS } from './providers/registry'

/** The gateway's routes besides dispatch: the model list, feedback (spec 4.4) and the metadata lookup (spec 4.2). */
export class GatewayInfo {
  private readonly now: () => number

  constructor(
    private readonly deps: {
      store: Store
      meta: MetaStore
      providers: Record<ProviderName, ProviderCredentials>
      now?: () => number
    },
  ) {
    this.now = deps.now ?? Date.now
  }

  /**
   * The models of the price table whose provider this gw can call (a key configured, or a self-hosted
   * server that needs none), in OpenAI's list shape so the SDKs' `models.list()` reads it.
   */
  models(_principal: Principal) {
    const usable = (name: ProviderName) => {
      const credentials = this.deps.providers[name]
      return Boolean(credentials.apiKey) || !PROVIDERS[name].requiresKey(credentials)
    }
    return {
      object: 'list' as const,
      data: PRICE_TABLE.filter((row) => usable(row.provider)).map((row) => ({
        id: row.model,
        object: 'model' as const,
        created: 0,
        owned_by: row.provider,
      })),
    }
  }

  /** Rates one of the caller's own requests; another organisation's request is not found. */
  async feedback(principal: Principal, requestId: string, rating: boolean | number) {
    const id = requestId.toLowerCase()
    const own =
      (await this.deps.meta.get(id))?.orgId === principal.orgId ||
      (await this.deps.store.requests.get(principal.orgId, id)) !== undefined
    if (!own) throw notFound('request')
    const value = typeof rating === 'boolean' ? (rating ? 1 : 0) : rating
    await this.deps.store.org(principal.orgId).feedback.upsert({
      requestId: id,
      rating: value,
      actorId: principal.actorId,
      createdAt: new Date(this.now()),
    })
    return { requestId: id, rating: value }
  }

  /**
   * A finished call's metadata (spec 4.2). No entry for the id (in flight, lapsed, never existed) is
   * pending; an entry of another organisation is not found, never forbidden, so the id's existence is
   * not disclosed beyond "not yours".
   */
  async meta(principal: Principal, requestId: string): Promise<GatewayMeta | 'pending'> {
    const entry = await this.deps.meta.get(requestId)
    if (!entry) return 'pending'
    if (entry.orgId !== principal.orgId) throw notFound('request')
    return entry.meta
  }
}
