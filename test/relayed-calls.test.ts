import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { A2aCall, McpToolCall } from '../src/store/repositories/calls'
import { createHarness, DIALECTS, type Harness, type Org } from './support/harness'

const at = (hour: number) => new Date(Date.UTC(2026, 4, 10, hour))
const window = { timeFilter: { start: '2026-05-10T00:00:00Z', end: '2026-05-10T23:59:59Z' } }

const toolCall = (orgId: string, id: string, fields: Partial<McpToolCall> = {}): McpToolCall => ({
  id,
  orgId,
  serverId: 'srv-1',
  serverName: 'Files',
  toolName: 'read_file',
  userId: null,
  apiKeyId: null,
  status: 'success',
  latencyMs: 100,
  costNano: 1_000_000,
  error: null,
  createdAt: at(9),
  ...fields,
})

const agentCall = (orgId: string, id: string, fields: Partial<A2aCall> = {}): A2aCall => ({
  id,
  orgId,
  agentId: 'agent-1',
  agentName: 'Researcher',
  skill: 'search',
  userId: null,
  apiKeyId: null,
  status: 'success',
  latencyMs: 300,
  costNano: 2_000_000,
  error: null,
  createdAt: at(9),
  ...fields,
})

for (const dialect of DIALECTS) {
  describe(`MCP, A2A and budget-action views on ${dialect}`, () => {
    let h: Harness
    let org: Org
    let other: Org

    beforeAll(async () => {
      h = await createHarness({ dialect })
      org = await h.org('growth')
      other = await h.org('growth')
    })
    afterAll(() => h.close())

    const post = async <T>(path: string, body: Record<string, unknown> = {}, token = org.apiKey) => {
      const response = await h.request('POST', path, { token, body: { ...window, ...body } })
      expect({ path, status: response.status }).toEqual({ path, status: 200 })
      return ((await response.json()) as { data: T }).data
    }

    test('before the features that write them land, every view answers empty, not 501', async () => {
      expect(await post('/v1/mcp/tool-calls')).toEqual({ calls: [], limit: 100, offset: 0 })
      expect(await post('/v1/mcp/summary')).toEqual({ calls: 0, errors: 0, averageLatencyMs: null, cost: 0, tools: [] })
      expect(await post('/v1/mcp/filter-options')).toEqual({ servers: [], tools: [], statuses: ['success', 'error'] })
      expect(await post('/v1/a2a/calls')).toEqual({ calls: [], limit: 100, offset: 0 })
      expect(await post('/v1/a2a/summary')).toEqual({ calls: 0, errors: 0, averageLatencyMs: null, cost: 0, agents: [] })
      expect(await post('/v1/budget/actions/breakdown')).toEqual([])
      const series = await post<unknown>('/v1/budget/actions/over-time', { dbIncrement: 'day' })
      expect(series).toEqual([{ time: '2026-05-10T00:00:00.000', values: { alert: 0, block: 0, downgrade: 0, throttle: 0 } }])
    })

    test('MCP tool calls: listed newest first and narrowed; summed per tool; the filter options', async () => {
      await h.store.mcpToolCalls.add(toolCall(org.orgId, 'm1'))
      await h.store.mcpToolCalls.add(
        toolCall(org.orgId, 'm2', { status: 'error', latencyMs: 300, error: 'timeout', createdAt: at(10) }),
      )
      await h.store.mcpToolCalls.add(toolCall(org.orgId, 'm3', { serverId: 'srv-2', serverName: 'Git', toolName: 'log' }))
      await h.store.mcpToolCalls.add(toolCall(other.orgId, 'm4', { serverName: 'Theirs', toolName: 'secret_tool' }))
      const listed = await post<{ calls: Array<{ id: string; cost: number }> }>('/v1/mcp/tool-calls')
      expect(listed.calls.map((c) => c.id)).toEqual(['m2', 'm3', 'm1'])
      expect(listed.calls[0]?.cost).toBe(0.001)
      const failed = await post<{ calls: Array<{ id: string }> }>('/v1/mcp/tool-calls', { status: 'error' })
      expect(failed.calls.map((c) => c.id)).toEqual(['m2'])
      const summary = await post<Record<string, unknown>>('/v1/mcp/summary')
      expect(summary).toMatchObject({ calls: 3, errors: 1, cost: 0.003 })
      expect(summary.averageLatencyMs).toBeCloseTo(166.667, 2)
      expect(await post('/v1/mcp/filter-options')).toEqual({
        servers: [
          { id: 'srv-1', name: 'Files' },
          { id: 'srv-2', name: 'Git' },
        ],
        tools: ['log', 'read_file'],
        statuses: ['success', 'error'],
      })
    })

    test('A2A calls: listed and summed per agent', async () => {
      await h.store.a2aCalls.add(agentCall(org.orgId, 'c1'))
      await h.store.a2aCalls.add(agentCall(org.orgId, 'c2', { agentId: 'agent-2', agentName: 'Writer', createdAt: at(11) }))
      await h.store.a2aCalls.add(agentCall(other.orgId, 'c3', { agentName: 'Theirs' }))
      expect((await post<{ calls: Array<{ id: string }> }>('/v1/a2a/calls')).calls.map((c) => c.id)).toEqual(['c2', 'c1'])
      const summary = await post<{ calls: number; agents: Array<{ agentName: string; calls: number }> }>('/v1/a2a/summary')
      expect(summary.calls).toBe(2)
      expect(summary.agents.map((a) => a.agentName).sort()).toEqual(['Researcher', 'Writer'])
    })

    test('budget actions: by action and scope, and over time', async () => {
      const action = (id: string, orgId: string, fields: Record<string, unknown>) =>
        h.store.budgetActions.add({
          id,
          orgId,
          scope: 'team',
          scopeId: 'team-1',
          action: 'alert',
          requestId: null,
          model: null,
          amountNano: 5_000_000_000,
          createdAt: at(8),
          ...fields,
        })
      await action('b1', org.orgId, {})
      await action('b2', org.orgId, { action: 'block', scope: 'member', createdAt: at(14) })
      await action('b3', org.orgId, {})
      await action('b4', other.orgId, { action: 'downgrade' })
      expect(await post('/v1/budget/actions/breakdown')).toEqual([
        { action: 'alert', scope: 'team', count: 2, amount: 10 },
        { action: 'block', scope: 'member', count: 1, amount: 5 },
      ])
      const series = await post<Array<{ values: Record<string, number> }>>('/v1/budget/actions/over-time', {
        timeFilter: { start: '2026-05-10T08:00:00Z', end: '2026-05-10T14:59:59Z' },
        dbIncrement: 'hour',
      })
      expect(series.length).toBe(7)
      expect(series[0]?.values).toEqual({ alert: 2, block: 0, downgrade: 0, throttle: 0 })
      expect(series[6]?.values).toEqual({ alert: 0, block: 1, downgrade: 0, throttle: 0 })
    })

    test('another organisation sees none of it; a request filter is refused here (these logs are not requests)', async () => {
      const theirs = JSON.stringify([
        await post('/v1/mcp/tool-calls', {}, other.apiKey),
        await post('/v1/a2a/calls', {}, other.apiKey),
        await post('/v1/budget/actions/breakdown', {}, other.apiKey),
      ])
      expect(theirs).not.toContain('m1')
      expect(theirs).not.toContain('c1')
      expect(theirs).not.toContain('"alert"')
      const refused = await h.request('POST', '/v1/mcp/summary', { token: org.apiKey, body: { filter: 'all' } })
      expect(refused.status).toBe(400)
      expect((await h.request('POST', '/v1/a2a/calls', { token: org.apiKey, body: { limit: 0 } })).status).toBe(400)
    })
  })
}
