import { and, avg, count, desc, eq, gte, inArray, lt, lte, type SQL, sql } from 'drizzle-orm'
import type { Database, Tables } from '../database'
import type { SpendScope } from './requests'

/**
 * The logs of calls gw relays besides model calls: MCP tool calls and A2A agent calls. The MCP and A2A
 * gateways write them (each a later feature); the views here read them, empty until then.
 */
export interface McpToolCall {
  id: string
  orgId: string
  serverId: string
  serverName: string
  toolName: string
  userId: string | null
  apiKeyId: string | null
  status: 'success' | 'error'
  latencyMs: number | null
  costNano: number | null
  error: string | null
  createdAt: Date
}

export interface A2aCall {
  id: string
  orgId: string
  agentId: string
  agentName: string
  skill: string | null
  userId: string | null
  apiKeyId: string | null
  status: 'success' | 'error'
  latencyMs: number | null
  costNano: number | null
  error: string | null
  createdAt: Date
}

export interface CallWindow {
  orgId: string
  start: Date
  end: Date
}

export interface CallPage {
  limit: number
  offset: number
}

type CallTable = Tables['mcpToolCalls'] | Tables['a2aCalls']

/** The organisation's calls in the window, narrowed by the given column values. */
const inWindow = (table: CallTable, w: CallWindow, narrow: SQL[] = []): SQL =>
  and(eq(table.orgId, w.orgId), gte(table.createdAt, w.start), lte(table.createdAt, w.end), ...narrow) as SQL

/** What every call summary reports: calls, failures, average latency, cost (nano-USD). */
const stats = (table: CallTable) => ({
  calls: count(),
  errors: sql<number>`coalesce(sum(case when ${table.status} = 'error' then 1 else 0 end), 0)`,
  averageLatencyMs: avg(table.latencyMs),
  costNano: sql<number>`coalesce(sum(${table.costNano}), 0)`,
})

export interface CallStats {
  calls: number
  errors: number
  averageLatencyMs: number | null
  costNano: number
}

const shownStats = (r: { calls: unknown; errors: unknown; averageLatencyMs: unknown; costNano: unknown }): CallStats => ({
  calls: Number(r.calls),
  errors: Number(r.errors),
  averageLatencyMs: r.averageLatencyMs === null ? null : Number(r.averageLatencyMs),
  costNano: Number(r.costNano),
})

/** Listing and totals, the same for either log; each repository adds what its own calls are grouped by. */
const callLog = <T extends CallTable>({ orm }: Database, calls: T) => ({
  async list(w: CallWindow, narrow: SQL[], page: CallPage) {
    return orm
      .select()
      .from(calls as CallTable)
      .where(inWindow(calls, w, narrow))
      .orderBy(desc(calls.createdAt), desc(calls.id))
      .limit(page.limit)
      .offset(page.offset)
  },
  async totals(w: CallWindow): Promise<CallStats> {
    const [row] = await orm
      .select(stats(calls))
      .from(calls as CallTable)
      .where(inWindow(calls, w))
    return shownStats(row ?? { calls: 0, errors: 0, averageLatencyMs: null, costNano: 0 })
  },
})

/** The provider a tool call is budgeted as: budgets scoped to provider `mcp` count tool calls alone. */
export const MCP_PROVIDER = 'mcp'

export const mcpToolCallsRepository = (db: Database) => {
  const calls = db.tables.mcpToolCalls
  const log = callLog(db, calls)
  return {
    async add(call: McpToolCall): Promise<void> {
      await db.orm.insert(calls).values(call)
    },
    async list(w: CallWindow, only: { serverId?: string; toolName?: string; status?: string }, page: CallPage) {
      const narrow = [
        ...(only.serverId ? [eq(calls.serverId, only.serverId)] : []),
        ...(only.toolName ? [eq(calls.toolName, only.toolName)] : []),
        ...(only.status ? [eq(calls.status, only.status as McpToolCall['status'])] : []),
      ]
      return (await log.list(w, narrow, page)) as McpToolCall[]
    },
    totals: log.totals,
    /**
     * What the organisation's tool calls in a budget's scope and window used, as the budgets count it
     * beside the request log: a call's member is its `userId`, its model `<server>__<tool>`, its provider
     * `mcp`; tool calls have no customer and no tokens.
     */
    async spendOf(scope: SpendScope, metric: 'usd' | 'tokens' | 'requests'): Promise<number> {
      const { match } = scope
      if (metric === 'tokens' || match.customerId !== undefined) return 0
      if (match.provider !== undefined && match.provider !== MCP_PROVIDER) return 0
      const conditions: Array<SQL | undefined> = [
        eq(calls.orgId, scope.orgId),
        gte(calls.createdAt, scope.start),
        lt(calls.createdAt, scope.end),
        eq(calls.status, 'success'),
      ]
      if (match.apiKeyId !== undefined) conditions.push(eq(calls.apiKeyId, match.apiKeyId))
      if (match.memberId !== undefined) conditions.push(eq(calls.userId, match.memberId))
      if (match.model !== undefined) {
        const at = match.model.indexOf('__')
        if (at <= 0) return 0
        conditions.push(eq(calls.serverName, match.model.slice(0, at)), eq(calls.toolName, match.model.slice(at + 2)))
      }
      if (scope.memberIds) {
        if (scope.memberIds.length === 0) return 0
        conditions.push(inArray(calls.userId, [...scope.memberIds]))
      }
      const [row] = await db.orm
        .select({ total: metric === 'usd' ? sql<number>`coalesce(sum(${calls.costNano}), 0)` : count() })
        .from(calls)
        .where(and(...conditions))
      return Number(row?.total ?? 0)
    },
    async byTool(w: CallWindow) {
      const rows = await db.orm
        .select({ serverId: calls.serverId, serverName: calls.serverName, toolName: calls.toolName, ...stats(calls) })
        .from(calls)
        .where(inWindow(calls, w))
        .groupBy(calls.serverId, calls.serverName, calls.toolName)
      return rows.map((r) => ({ serverId: r.serverId, serverName: r.serverName, toolName: r.toolName, ...shownStats(r) }))
    },
  }
}

export const a2aCallsRepository = (db: Database) => {
  const calls = db.tables.a2aCalls
  const log = callLog(db, calls)
  return {
    async add(call: A2aCall): Promise<void> {
      await db.orm.insert(calls).values(call)
    },
    async list(w: CallWindow, only: { agentId?: string; status?: string }, page: CallPage) {
      const narrow = [
        ...(only.agentId ? [eq(calls.agentId, only.agentId)] : []),
        ...(only.status ? [eq(calls.status, only.status as A2aCall['status'])] : []),
      ]
      return (await log.list(w, narrow, page)) as A2aCall[]
    },
    totals: log.totals,
    async byAgent(w: CallWindow) {
      const rows = await db.orm
        .select({ agentId: calls.agentId, agentName: calls.agentName, ...stats(calls) })
        .from(calls)
        .where(inWindow(calls, w))
        .groupBy(calls.agentId, calls.agentName)
      return rows.map((r) => ({ agentId: r.agentId, agentName: r.agentName, ...shownStats(r) }))
    },
  }
}
