import { OffsetPage, type PageSize, Paging } from '../../http/schema'
import { Maybe, timeBodyWith } from '../../query/model'
import { oneOf, t } from '../../util/typebox'

const Status = oneOf(['success', 'error'])
const Id = t.String({ maxLength: 200 })

export const CALLS_PAGE: PageSize = { maxLimit: 1_000, defaultLimit: 100 }
const { limit, offset } = Paging(CALLS_PAGE)
const PAGE_FIELDS = { limit, offset }

/** The time window and a page: the summaries and filter options take this body. */
export const CallsBody = timeBodyWith(PAGE_FIELDS)
export type CallsInput = typeof CallsBody.static

export const McpToolCallsBody = timeBodyWith({
  ...PAGE_FIELDS,
  serverId: t.Optional(Id),
  toolName: t.Optional(Id),
  status: t.Optional(Status),
})
export type McpToolCallsInput = typeof McpToolCallsBody.static

export const A2aCallsBody = timeBodyWith({ ...PAGE_FIELDS, agentId: t.Optional(Id), status: t.Optional(Status) })
export type A2aCallsInput = typeof A2aCallsBody.static

const Stats = {
  calls: t.Number(),
  errors: t.Number(),
  averageLatencyMs: Maybe(t.Number()),
  cost: t.Number({ description: 'USD' }),
}
const Call = {
  id: t.String(),
  createdAt: t.String({ format: 'date-time' }),
  userId: Maybe(t.String()),
  apiKeyId: Maybe(t.String()),
  status: Status,
  latencyMs: Maybe(t.Number()),
  cost: Maybe(t.Number({ description: 'USD' })),
  error: Maybe(t.String()),
}

export const McpToolCalls = t.Object({
  calls: t.Array(t.Object({ ...Call, serverId: t.String(), serverName: t.String(), toolName: t.String() })),
  ...OffsetPage,
})

export const McpSummary = t.Object({
  ...Stats,
  tools: t.Array(t.Object({ serverId: t.String(), serverName: t.String(), toolName: t.String(), ...Stats })),
})

export const McpFilterOptions = t.Object({
  servers: t.Array(t.Object({ id: t.String(), name: t.String() })),
  tools: t.Array(t.String()),
  statuses: t.Array(t.String()),
})

export const A2aCalls = t.Object({
  calls: t.Array(t.Object({ ...Call, agentId: t.String(), agentName: t.String(), skill: Maybe(t.String()) })),
  ...OffsetPage,
})

export const A2aSummary = t.Object({
  ...Stats,
  agents: t.Array(t.Object({ agentId: t.String(), agentName: t.String(), ...Stats })),
})
