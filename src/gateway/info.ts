import type { Principal } from '../auth/principal'
import type { OperatorProviders, ProviderName } from '../directory/providers'
import { notFound } from '../errors'
import { priceFor } from '../money/cost'
import { type ModelPrice, PRICE_TABLE } from '../money/prices'
import type { Store } from '../store/store'
import { lapsesAt, metaOfRecord } from './meta/of-record'
import type { GatewayMeta, MetaStore, StoredMeta } from './meta/store'
import { operatorConfigured, PROVIDERS } from './providers/registry'
import type { RequestLog } from './request-log/request-log'

const modelOf = (row: ModelPrice) => ({ id: row.model, object: 'model' as const, created: 0, owned_by: row.provider })

/** The gateway's routes besides dispatch: the model list, feedback (spec 4.4) and the metadata lookup (spec 4.2). */
export class GatewayInfo {
  private readonly now: () => number

  constructor(
    private readonly deps: {
      store: Store
      /** Shared with other instances (Redis); absent for a single instance. */
      meta?: MetaStore
      /** Records not written yet: a call's metadata is read there until its record is in the database. */
      requestLog: Pick<RequestLog, 'unwrittenRecord'>
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
      (await this.deps.meta?.get(id))?.orgId === principal.orgId ||
      this.deps.requestLog.unwrittenRecord(id)?.orgId === principal.orgId ||
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
    const entry = await this.find(requestId)
    if (!entry) return 'pending'
    if (entry.orgId !== principal.orgId) throw notFound('request')
    return entry.meta
  }

  /**
   * A call's metadata and its owner, whoever asks (callers compare the owner), within its lifetime:
   * from the shared store when there is one, else from the call's record, still queued in this
   * instance's request log or written to the database. Nothing is kept for the lookup apart from the
   * record: most calls are never looked up, and storing each one's metadata was 7-9 % of the event
   * loop's time (bench/results/2026-11-28-metadata-from-the-log.md).
   */
  async find(requestId: string): Promise<StoredMeta | undefined> {
    const id = requestId.toLowerCase()
    const shared = await this.deps.meta?.get(id)
    if (shared) return shared
    const record = this.deps.requestLog.unwrittenRecord(id) ?? (await this.deps.store.requests.ofAnyOrganization(id))
    return record && lapsesAt(record, this.deps.metaTtlSeconds) > this.now() ? metaOfRecord(record) : undefined
  }
}
