import { Elysia, t } from 'elysia'
import { answer } from '../../http/answer'
import type { Authz } from '../../http/authz'
import { Deleted, Ok } from '../../http/schema'
import { Rate, RateBody, RateParams } from './model'
import type { ToolRatesService } from './service'

/** What MCP tool calls through gw cost (spec 4.6 `spend_controls.write`; the list `org.read`). */
export const toolRateRoutes = (authz: Authz, rates: ToolRatesService) =>
  new Elysia({ name: 'tool-rate-routes' })
    .use(authz)
    .get('/v1/tool-rates', ({ principal }) => answer(rates.list(principal)), {
      catalogued: true,
      response: Ok(t.Array(Rate)),
      detail: { summary: "The organization's MCP tool rates; the most specific one prices a call, none: free" },
    })
    .put('/v1/tool-rates', ({ principal, body }) => answer(rates.put(principal, body)), {
      catalogued: true,
      body: RateBody,
      response: Ok(Rate),
      detail: { summary: 'Set what a call of a tool costs (a server or *, a tool or *), or reprice the rate of the same pair' },
    })
    .delete('/v1/tool-rates/:id', ({ principal, params }) => answer(rates.remove(principal, params.id)), {
      catalogued: true,
      params: RateParams,
      response: Ok(Deleted),
      detail: { summary: 'Delete a tool rate' },
    })
