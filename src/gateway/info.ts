import type { Principal } from '../auth/principal'
import type { OperatorProviders, ProviderName } from '../directory/providers'
import { notFound } from '../errors'
import { priceFor } from '../money/cost'
import { type ModelPrice, PRICE_TABLE } from '../money/prices'
import type { Store } from '../store/store'
import { lapsesAt, metaOfRecord } from './meta/of-record'
import type { GatewayMeta, MetaStore, StoredMeta } from './meta/store'
import { operatorConfigured, PROVIDERS } from './providers/registry'

const modelOf = (row: ModelPrice) => ({ id: row.model, object: 'model' as const, created: 0, owned_by: row.provider })

/** The gateway's routes besides dispatch: the model list, feedback (spec 4.4) and the metadata lookup (spec 4.2). */
export class GatewayInfo {
  private readonly now: () => number

  constructor(
    private readonly deps: {
      store: Store
      meta: MetaStore
      /** How long after it finished a call's metadata is answered (spec 4.2: 300 s). */
      metaTtlSeconds: number
      providers: OperatorProviders
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
    return { object: 'list' as const, data: this.reachable().map(modelOf) }
  }

  /**
   * One model of the list, by its id, an alias or a dated snapshot of it (OpenAI's `models.retrieve`),
   * as the price table knows them; any other id is not found, as it is at OpenAI.
   */
  model(_principal: Principal, id: string) {
    const reachable = new Set(this.reachable())
    for (const provider of Object.keys(PROVIDERS) as ProviderName[]) {
      const row = priceFor(provider, id)
      if (row && reachable.has(row)) return { ...modelOf(row), id }
    }
    throw notFound(`model ${id}`)
  }

  private reachable() {
    return PRICE_TABLE.filter((row) => operatorConfigured(this.deps.providers, row.provider))
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
    const entry = (await this.deps.meta.get(requestId)) ?? (await this.recorded(requestId.toLowerCase()))
    if (!entry) return 'pending'
    if (entry.orgId !== principal.orgId) throw notFound('request')
    return entry.meta
  }

  /**
   * The call's metadata from its record, within the same lifetime, for a call the store no longer
   * holds. A call whose record is not written yet (the writer's batches are about 50 ms apart) is in
   * the store, which keeps far more than that.
   */
  private async recorded(id: string): Promise<StoredMeta | undefined> {
    const record = await this.deps.store.requests.ofAnyOrganization(id)
    return record && lapsesAt(record, this.deps.metaTtlSeconds) > this.now() ? metaOfRecord(record) : undefined
  }
}
