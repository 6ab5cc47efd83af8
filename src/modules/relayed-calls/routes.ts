import { Elysia, t } from 'elysia'
import type { Authz } from '../../http/authz'
import { Ok } from '../../http/schema'
import { Maybe, PAGE_FIELDS, timeBodyWith } from '../../query/model'
import { oneOf } from '../../util/typebox'
import type { RelayedCallViews } from './views'

const Status = oneOf(['success', 'error'])
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
const id = t.String({ maxLength: 200 })
const CallsBody = timeBodyWith(PAGE_FIELDS)
const Page = { offset: t.Number(), limit: t.Number() }
const read = { catalogued: true as const }

/** The MCP and A2A views (spec 4.6 `traffic.read`). */
export const relayedCallRoutes = (authz: Authz, views: RelayedCallViews) =>
  new Elysia({ name: 'relayed-call-routes' })
    .use(authz)
    .post(
      '/v1/mcp/tool-calls',
      async ({ principal, body }) => ({ data: await views.mcpToolCalls(principal, body), error: null }),
      {
        ...read,
        body: timeBodyWith({ ...PAGE_FIELDS, serverId: t.Optional(id), toolName: t.Optional(id), status: t.Optional(Status) }),
        response: Ok(
          t.Object({
            calls: t.Array(t.Object({ ...Call, serverId: t.String(), serverName: t.String(), toolName: t.String() })),
            ...Page,
          }),
        ),
        detail: { summary: 'MCP tool calls relayed by gw, newest first' },
      },
    )
    .post('/v1/mcp/summary', async ({ principal, body }) => ({ data: await views.mcpSummary(principal, body), error: null }), {
      ...read,
      body: CallsBody,
      response: Ok(
        t.Object({
          ...Stats,
          tools: t.Array(t.Object({ serverId: t.String(), serverName: t.String(), toolName: t.String(), ...Stats })),
        }),
      ),
      detail: { summary: 'MCP tool calls in all and per tool: calls, errors, average latency, cost' },
    })
    .post(
      '/v1/mcp/filter-options',
      async ({ principal, body }) => ({ data: await views.mcpFilterOptions(principal, body), error: null }),
      {
        ...read,
        body: CallsBody,
        response: Ok(
          t.Object({
            servers: t.Array(t.Object({ id: t.String(), name: t.String() })),
            tools: t.Array(t.String()),
            statuses: t.Array(t.String()),
          }),
        ),
        detail: { summary: 'The servers, tools and statuses the tool-call listing can be narrowed by' },
      },
    )
    .post('/v1/a2a/calls', async ({ principal, body }) => ({ data: await views.a2aCalls(principal, body), error: null }), {
      ...read,
      body: timeBodyWith({ ...PAGE_FIELDS, agentId: t.Optional(id), status: t.Optional(Status) }),
      response: Ok(
        t.Object({
          calls: t.Array(t.Object({ ...Call, agentId: t.String(), agentName: t.String(), skill: Maybe(t.String()) })),
          ...Page,
        }),
      ),
      detail: { summary: 'Calls to A2A agents relayed by gw, newest first' },
    })
    .post('/v1/a2a/summary', async ({ principal, body }) => ({ data: await views.a2aSummary(principal, body), error: null }), {
      ...read,
      body: CallsBody,
      response: Ok(t.Object({ ...Stats, agents: t.Array(t.Object({ agentId: t.String(), agentName: t.String(), ...Stats })) })),
      detail: { summary: 'A2A agent calls in all and per agent: calls, errors, average latency, cost' },
    })
