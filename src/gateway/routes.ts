import { Elysia, t } from 'elysia'
import { notFound } from '../errors'
import type { Authz } from '../http/authz'
import { DISPATCH_PATHS, type DispatchHandler, type DispatchPath } from './http'
import type { GatewayInfo } from './info'
import { lookupMeta } from './meta/lookup'
import type { MetaStore } from './meta/store'

/** Spec 4.2: 8-4-4-4-12 hex, version nibble 4, variant 8, 9, a or b; any case. */
export const UUID_V4 = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-4[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$'

export const gatewayRoutes = (
  authz: Authz,
  dispatch: (path: DispatchPath) => DispatchHandler,
  meta: MetaStore,
  info: GatewayInfo,
) => {
  const routes = new Elysia({ name: 'gateway-routes' })
    .use(authz)
    .get('/v1/models', ({ principal }) => info.models(principal), {
      gateway: true,
      detail: { summary: 'Models the caller can reach (OpenAI list shape)' },
    })
    .post(
      '/v1/feedback',
      async ({ principal, body }) => ({ data: await info.feedback(principal, body.requestId, body.rating), error: null }),
      {
        gateway: true,
        body: t.Object({
          requestId: t.String({ pattern: UUID_V4, error: 'requestId must be a UUID v4 (the Gw-Id header of a response)' }),
          rating: t.Union([t.Boolean(), t.Number({ minimum: -1, maximum: 1 })], {
            error: 'rating must be true/false or a number from -1 to 1',
          }),
        }),
        detail: { summary: "Rate one of the caller's own requests" },
      },
    )
    .get(
      '/gateway/v1/meta/:requestId',
      async ({ principal, params, set }) => {
        const found = await lookupMeta(meta, principal.orgId, params.requestId)
        if (found.status === 404) throw notFound('request')
        set.status = found.status
        return found.body
      },
      {
        gateway: true,
        params: t.Object({ requestId: t.String({ pattern: UUID_V4, error: 'requestId must be a UUID v4' }) }),
        detail: { summary: 'Metadata of a finished request (spec 4.2)' },
      },
    )
  // Elysia registers in place; the loop keeps the five dispatch paths as one list. The handler does its
  // own authentication (see http.ts), so the route takes no macro; the detail documents what it checks.
  for (const path of DISPATCH_PATHS) {
    const handle = dispatch(path)
    routes.post(path, ({ request, server }) => handle(request, server ?? undefined), {
      parse: 'none',
      detail: { summary: `Provider dispatch: ${path}`, security: [{ bearer: [] }], 'x-scope': 'gateway' } as Record<
        string,
        unknown
      >,
    })
  }
  return routes
}
