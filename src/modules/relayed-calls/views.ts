import type { Principal } from '../../auth/principal'
import { nanoToUsd } from '../../money/cost'
import { parseWindow } from '../../query/time'
import type { A2aCall, CallStats, McpToolCall } from '../../store/repositories/calls'
import type { Store } from '../../store/store'
import { type A2aCallsInput, CALLS_PAGE, type CallsInput, type McpToolCallsInput } from './model'

/** Call statistics as the API shows them: cost in USD. */
const shownStats = ({ costNano, ...rest }: CallStats) => ({ ...rest, cost: nanoToUsd(costNano) })

const common = (c: McpToolCall | A2aCall) => ({
  id: c.id,
  createdAt: c.createdAt.toISOString(),
  userId: c.userId,
  apiKeyId: c.apiKeyId,
  status: c.status,
  latencyMs: c.latencyMs,
  cost: c.costNano === null ? null : nanoToUsd(c.costNano),
  error: c.error,
})

/**
 * The MCP and A2A views (spec 4.6 `traffic.read`): the calls gw relays besides model calls, to MCP
 * tools and to A2A agents, over a time window. The MCP and A2A gateways that write them are later
 * features; until they land these answer from their tables, empty.
 */
export class RelayedCallViews {
  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
  ) {}

  async mcpToolCalls(principal: Principal, input: McpToolCallsInput) {
    const page = this.page(input)
    const calls = await this.store.mcpToolCalls.list(this.window(principal, input), input, page)
    return {
      calls: calls.map((c) => ({ ...common(c), serverId: c.serverId, serverName: c.serverName, toolName: c.toolName })),
      ...page,
    }
  }

  async mcpSummary(principal: Principal, input: CallsInput) {
    const window = this.window(principal, input)
    const [totals, tools] = await Promise.all([this.store.mcpToolCalls.totals(window), this.store.mcpToolCalls.byTool(window)])
    return {
      ...shownStats(totals),
      tools: tools.map(({ serverId, serverName, toolName, ...stats }) => ({
        serverId,
        serverName,
        toolName,
        ...shownStats(stats),
      })),
    }
  }

  /** What the tool-call listing can be narrowed by, from the calls of the window. */
  async mcpFilterOptions(principal: Principal, input: CallsInput) {
    const tools = await this.store.mcpToolCalls.byTool(this.window(principal, input))
    const servers = new Map(tools.map((t) => [t.serverId, t.serverName]))
    return {
      servers: [...servers].map(([id, name]) => ({ id, name })).sort((a, b) => a.name.localeCompare(b.name)),
      tools: [...new Set(tools.map((t) => t.toolName))].sort(),
      statuses: ['success', 'error'],
    }
  }

  async a2aCalls(principal: Principal, input: A2aCallsInput) {
    const page = this.page(input)
    const calls = await this.store.a2aCalls.list(this.window(principal, input), input, page)
    return {
      calls: calls.map((c) => ({ ...common(c), agentId: c.agentId, agentName: c.agentName, skill: c.skill })),
      ...page,
    }
  }

  async a2aSummary(principal: Principal, input: CallsInput) {
    const window = this.window(principal, input)
    const [totals, agents] = await Promise.all([this.store.a2aCalls.totals(window), this.store.a2aCalls.byAgent(window)])
    return {
      ...shownStats(totals),
      agents: agents.map(({ agentId, agentName, ...stats }) => ({ agentId, agentName, ...shownStats(stats) })),
    }
  }

  private page(input: CallsInput) {
    return { limit: input.limit ?? CALLS_PAGE.defaultLimit, offset: input.offset ?? 0 }
  }

  private window(principal: Principal, input: CallsInput) {
    const { start, end } = parseWindow(input, this.now())
    return { orgId: principal.orgId, start, end }
  }
}
