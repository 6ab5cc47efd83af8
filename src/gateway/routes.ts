import { Elysia, t } from 'elysia'
import { ApiError } from '../errors'
import type { Authz } from '../http/authz'

/** Provider-style paths (spec 4.3). Each is dispatched to a provider once the gateway lands (issue 3). */
export const DISPATCH_PATHS = [
  '/v1/chat/completions',
  '/v1/completions',
  '/v1/embeddings',
  '/v1/responses',
  '/v1/messages',
] as const

/** Spec 4.2: 8-4-4-4-12 hex, version nibble 4, variant 8, 9, a or b; any case. */
export const UUID_V4 = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-4[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$'

const pending = (what: string) => (): never => {
  throw new ApiError('not_implemented', `${what} is not implemented yet`)
}

/** The gateway's routes, authenticated like every other; their behaviour comes with the gateway issue. */
export const gatewayRoutes = (authz: Authz) => {
  const routes = new Elysia({ name: 'gateway-routes' })
    .use(authz)
    .get('/v1/models', pending('GET /v1/models'), { authenticated: true })
    .post('/v1/feedback', pending('POST /v1/feedback'), { authenticated: true })
    .get('/gateway/v1/meta/:requestId', pending('the metadata lookup'), {
      authenticated: true,
      params: t.Object({ requestId: t.String({ pattern: UUID_V4 }) }),
    })
  // Elysia registers in place; the loop keeps the five dispatch paths as one list.
  for (const path of DISPATCH_PATHS) routes.post(path, pending(`dispatch to ${path}`), { authenticated: true })
  return routes
}
