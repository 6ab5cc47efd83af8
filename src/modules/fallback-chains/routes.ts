import { Elysia, t } from 'elysia'
import { answer, answerCreated } from '../../http/answer'
import type { Authz } from '../../http/authz'
import { Created, Deleted, Ok } from '../../http/schema'
import { Chain, ChainBody, ChainCall, ChainParams } from './model'
import type { FallbackChainsService } from './service'

/** Fallback chains (spec 4.6 `gateway_config.write`; the list is gw's own, `org.read`). */
export const fallbackChainRoutes = (authz: Authz, chains: FallbackChainsService) =>
  new Elysia({ name: 'fallback-chain-routes' })
    .use(authz)
    .get('/v1/gateway/fallback-chains', ({ principal }) => answer(chains.list(principal)), {
      catalogued: true,
      response: Ok(t.Array(Chain)),
      detail: { summary: "The organization's fallback chains, with the defaults of what they leave out filled in" },
    })
    .post('/v1/gateway/fallback-chains', ({ principal, body }) => answerCreated(chains.create(principal, body)), {
      catalogued: true,
      body: ChainBody,
      response: Created(Chain),
      detail: {
        summary: 'Create a fallback chain: calls naming match.model are served by its steps in turn (409 when the model has one)',
      },
    })
    .put(
      '/v1/gateway/fallback-chains/:chainId',
      ({ principal, params, body }) => answer(chains.replace(principal, params.chainId, body)),
      {
        catalogued: true,
        params: ChainParams,
        body: ChainBody,
        response: Ok(Chain),
        detail: { summary: 'Replace a fallback chain whole: what the body leaves out goes back to the defaults' },
      },
    )
    .get(
      '/v1/gateway/fallback-chains/:chainId/calls',
      ({ principal, params }) => answer(chains.recentCalls(principal, params.chainId)),
      {
        catalogued: true,
        params: ChainParams,
        response: Ok(t.Array(ChainCall)),
        detail: { summary: "A chain's latest calls, newest first, with the step that served each" },
      },
    )
    .delete('/v1/gateway/fallback-chains/:chainId', ({ principal, params }) => answer(chains.remove(principal, params.chainId)), {
      catalogued: true,
      params: ChainParams,
      response: Ok(Deleted),
      detail: { summary: 'Delete a fallback chain' },
    })
