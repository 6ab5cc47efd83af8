import { and, eq, gt, lt, or, type SQL } from 'drizzle-orm'
import type { Principal } from '../../auth/principal'
import { requireTier } from '../../auth/tiers'
import { badRequest, forbidden, notFound } from '../../errors'
import { nanoToUsd } from '../../money/cost'
import { decodeCursor, encodeCursor, type PagePosition } from '../../query/cursor'
import { mentionsField, requestScope, type Wrapper } from '../../query/filter'
import type { RequestBodyRecord } from '../../store/repositories/request-bodies'
import type { RequestRecord, RequestSort } from '../../store/repositories/requests'
import type { Store } from '../../store/store'
import { type IdsInput, PAGE_SIZES, type QueryInput } from './model'

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
  customerId: r.customerId,
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
  country: r.country,
  ...(body ? { body: { request: body.requestBody, response: body.responseBody, truncated: body.truncated } } : {}),
})

/** Request queries over the request log (spec 4.5): the SQL store today, the same interface for ClickHouse later. */
export class TrafficService {
  constructor(
    private readonly store: Store,
    private readonly usersFeature: boolean,
  ) {}

  async query(principal: Principal, input: QueryInput, wrapper: Wrapper = 'request') {
    const limit = input.limit ?? PAGE_SIZES[wrapper].defaultLimit
    const offset = input.offset ?? 0
    const sort = this.sort(input.sort)
    let where = this.scope(principal, input.filter, wrapper)
    if (input.cursor !== undefined) {
      if (sort.field !== 'created_at') throw badRequest('cursor paging needs the sort by created_at')
      if (offset !== 0) throw badRequest('pass either cursor or offset, not both')
      const cursor = decodeCursor(input.cursor)
      if (cursor.tag !== sort.direction) throw badRequest('the cursor belongs to the other sort direction')
      where = and(where, this.after(cursor, sort.direction)) as SQL
    }
    const rows = await this.store.requests.search({ where, sort, limit, offset })
    const last = rows.at(-1)
    const nextCursor = rows.length === limit && last && sort.field === 'created_at' ? encodeCursor(last, sort.direction) : null
    return { requests: await this.withBodies(principal, rows, input.includeBodies), offset, limit, nextCursor }
  }

  /** The rows that come after the cursor in its order (created_at, then id, as `search` sorts). */
  private after(cursor: PagePosition, direction: RequestSort['direction']): SQL {
    const { createdAt, id } = this.store.schema.tables.requests
    const at = cursor.createdAt
    return direction === 'desc'
      ? (or(lt(createdAt, at), and(eq(createdAt, at), lt(id, cursor.id))) as SQL)
      : (or(gt(createdAt, at), and(eq(createdAt, at), gt(id, cursor.id))) as SQL)
  }

  async count(principal: Principal, filter: unknown) {
    return { count: await this.store.requests.count(this.scope(principal, filter, 'request')) }
  }

  async byIds(principal: Principal, input: IdsInput) {
    const rows = await this.store.requests.getMany(
      principal.orgId,
      input.requestIds.map((id) => id.toLowerCase()),
    )
    const views = await this.withBodies(principal, rows, input.includeBodies)
    if (!input.includeAnnotations || rows.length === 0) return { requests: views }
    const annotations = await this.store.org(principal.orgId).annotations.ofRequests(rows.map((r) => r.id))
    return { requests: views.map((v) => ({ ...v, annotations: annotations.get(v.id) })) }
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
