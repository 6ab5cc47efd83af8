import type { Principal } from '../../auth/principal'
import { requireTier } from '../../auth/tiers'
import { badRequest, forbidden, notFound } from '../../errors'
import { nanoToUsd } from '../../gateway/cost/cost'
import type { RequestBodyRecord } from '../../store/repositories/request-bodies'
import type { RequestRecord, RequestSort } from '../../store/repositories/requests'
import type { Store } from '../../store/store'
import { mentionsField, requestScope, type Wrapper } from './filter'

export interface QueryInput {
  filter?: unknown
  offset?: number
  limit?: number
  sort?: Partial<Record<RequestSort['field'], RequestSort['direction']>>
  includeBodies?: boolean
}

/** Interactive pages stay small; bulk export pages are larger (issue 7 documents both). */
export const PAGE_LIMITS = { request: 1_000, request_response_rmt: 10_000 } as const
const DEFAULT_LIMIT = 100

const view = (r: RequestRecord, body?: RequestBodyRecord) => ({
  id: r.id,
  createdAt: r.createdAt.toISOString(),
  provider: r.provider,
  model: r.model,
  path: r.path,
  status: r.status,
  httpStatus: r.httpStatus,
  gatewayMode: r.gatewayMode,
  translationWarning: r.translationWarning,
  userId: r.userId,
  sessionId: r.sessionId,
  apiKeyId: r.apiKeyId,
  properties: r.properties ?? {},
  latencyMs: r.latencyMs,
  timeToFirstTokenMs: r.timeToFirstTokenMs,
  tokens: {
    prompt: r.promptTokens,
    completion: r.completionTokens,
    cacheRead: r.cacheReadTokens,
    cacheWrite: r.cacheWriteTokens,
    total: r.totalTokens,
  },
  cost: r.costNano === null ? null : nanoToUsd(r.costNano),
  costNote: r.costNote,
  estimatedCost: r.estimatedCostNano === null ? null : nanoToUsd(r.estimatedCostNano),
  ptb: r.ptb,
  error: r.error,
  ...(body ? { body: { request: body.requestBody, response: body.responseBody, truncated: body.truncated } } : {}),
})

/** Request queries over the request log (spec 4.5): the SQL store today, the same interface for ClickHouse later. */
export class TrafficService {
  constructor(
    private readonly store: Store,
    private readonly usersFeature: boolean,
  ) {}

  async query(principal: Principal, input: QueryInput, wrapper: Wrapper = 'request') {
    const limit = input.limit ?? DEFAULT_LIMIT
    if (limit > PAGE_LIMITS[wrapper]) throw badRequest(`limit must be at most ${PAGE_LIMITS[wrapper]}`)
    const rows = await this.store.requests.search({
      where: this.scope(principal, input.filter, wrapper),
      sort: this.sort(input.sort),
      limit,
      offset: input.offset ?? 0,
    })
    return { requests: await this.withBodies(principal, rows, input.includeBodies), offset: input.offset ?? 0, limit }
  }

  async count(principal: Principal, filter: unknown) {
    return { count: await this.store.requests.count(this.scope(principal, filter, 'request')) }
  }

  async byIds(principal: Principal, ids: readonly string[], includeBodies?: boolean) {
    const rows = await this.store.requests.getMany(
      principal.orgId,
      ids.map((id) => id.toLowerCase()),
    )
    return { requests: await this.withBodies(principal, rows, includeBodies) }
  }

  /** Assets (images and files of a request) are not stored yet: a request's asset is not found. */
  async asset(principal: Principal, requestId: string, assetId: string): Promise<never> {
    if (!(await this.store.requests.get(principal.orgId, requestId.toLowerCase()))) throw notFound('request')
    throw notFound(`asset ${assetId}`)
  }

  /** Filtering by user is the Users feature (spec 4.5): Growth tier or higher, and the deployment can switch it off. */
  private scope(principal: Principal, filter: unknown, wrapper: Wrapper) {
    if (mentionsField(filter, 'user_id')) {
      if (!this.usersFeature) throw forbidden('the Users feature is switched off in this deployment (GW_USERS_FEATURE)')
      requireTier(principal.tier, 'growth', 'Filtering by user')
    }
    return requestScope(this.store.schema, principal.orgId, filter ?? 'all', wrapper)
  }

  private sort(sort: QueryInput['sort']): RequestSort {
    const entries = Object.entries(sort ?? {})
    if (entries.length > 1) throw badRequest('sort takes one field')
    const [field, direction] = entries[0] ?? ['created_at', 'desc']
    return { field: field as RequestSort['field'], direction: direction as RequestSort['direction'] }
  }

  private async withBodies(principal: Principal, rows: RequestRecord[], includeBodies?: boolean) {
    if (!includeBodies) return rows.map((r) => view(r))
    const bodies = new Map(
      (
        await this.store.requestBodies.getMany(
          principal.orgId,
          rows.map((r) => r.id),
        )
      ).map((b) => [b.requestId, b]),
    )
    return rows.map((r) => view(r, bodies.get(r.id)))
  }
}
