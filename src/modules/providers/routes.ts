import { Elysia, t } from 'elysia'
import { answer } from '../../http/answer'
import type { Authz } from '../../http/authz'
import { Ok } from '../../http/schema'
import { GatewayProvider } from './model'
import type { ProvidersService } from './service'

/** The providers gw calls, as an organisation sees them (gw's own route, org.read). */
export const providerRoutes = (authz: Authz, providers: ProvidersService) =>
  new Elysia({ name: 'provider-routes' })
    .use(authz)
    .get('/v1/gateway/providers', ({ principal }) => answer(providers.list(principal)), {
      catalogued: true,
      response: Ok(t.Array(GatewayProvider)),
      detail: {
        summary:
          "Every provider gw calls: whether the operator configured it, how many keys of the organization's own it has, and its catalogued models with their prices",
      },
    })
