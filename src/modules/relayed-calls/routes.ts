import { Elysia } from 'elysia'
import { answer } from '../../http/answer'
import type { Authz } from '../../http/authz'
import { Ok } from '../../http/schema'
import {
  A2aCalls,
  A2aCallsBody,
  A2aSummary,
  CallsBody,
  McpFilterOptions,
  McpSummary,
  McpToolCalls,
  McpToolCallsBody,
} from './model'
import type { RelayedCallViews } from './views'

const read = { catalogued: true as const }

/** The MCP and A2A views (spec 4.6 `traffic.read`). */
export const relayedCallRoutes = (authz: Authz, views: RelayedCallViews) =>
  new Elysia({ name: 'relayed-call-routes' })
    .use(authz)
    .post('/v1/mcp/tool-calls', ({ principal, body }) => answer(views.mcpToolCalls(principal, body)), {
      ...read,
      body: McpToolCallsBody,
      response: Ok(McpToolCalls),
      detail: { summary: 'MCP tool calls relayed by gw, newest first' },
    })
    .post('/v1/mcp/summary', ({ principal, body }) => answer(views.mcpSummary(principal, body)), {
      ...read,
      body: CallsBody,
      response: Ok(McpSummary),
      detail: { summary: 'MCP tool calls in all and per tool: calls, errors, average latency, cost' },
    })
    .post('/v1/mcp/filter-options', ({ principal, body }) => answer(views.mcpFilterOptions(principal, body)), {
      ...read,
      body: CallsBody,
      response: Ok(McpFilterOptions),
      detail: { summary: 'The servers, tools and statuses the tool-call listing can be narrowed by' },
    })
    .post('/v1/a2a/calls', ({ principal, body }) => answer(views.a2aCalls(principal, body)), {
      ...read,
      body: A2aCallsBody,
      response: Ok(A2aCalls),
      detail: { summary: 'Calls to A2A agents relayed by gw, newest first' },
    })
    .post('/v1/a2a/summary', ({ principal, body }) => answer(views.a2aSummary(principal, body)), {
      ...read,
      body: CallsBody,
      response: Ok(A2aSummary),
      detail: { summary: 'A2A agent calls in all and per agent: calls, errors, average latency, cost' },
    })
