import { t } from '../../util/typebox'

/** The most a call may be priced at, in USD. */
export const MAX_USD_PER_CALL = 1000
export const MAX_TOOL_CHARS = 200

export const RateBody = t.Object(
  {
    serverId: t.String({
      minLength: 1,
      maxLength: 64,
      description: "one of the organization's MCP servers by id, or * for every server",
      error: "must be the id of one of the organization's MCP servers, or *",
    }),
    tool: t.String({
      minLength: 1,
      maxLength: MAX_TOOL_CHARS,
      description: 'the tool as its server names it (without the server prefix), or * for every tool',
      error: `must be a tool name of 1 to ${MAX_TOOL_CHARS} characters, or *`,
    }),
    usdPerCall: t.Number({
      minimum: 0,
      maximum: MAX_USD_PER_CALL,
      description: 'what one call costs, in USD, at most 9 decimal places',
      error: `must be a number of USD from 0 to ${MAX_USD_PER_CALL}, at most 9 decimal places`,
    }),
  },
  { additionalProperties: false },
)
export type RateInput = typeof RateBody.static

export const RateParams = t.Object({ id: t.String({ minLength: 1, maxLength: 64 }) })

export const Rate = t.Object({
  id: t.String(),
  serverId: t.String({ description: 'an MCP server id, or *' }),
  tool: t.String({ description: 'a tool name, or *' }),
  usdPerCall: t.Number(),
  createdAt: t.String({ format: 'date-time' }),
  updatedAt: t.String({ format: 'date-time' }),
})
