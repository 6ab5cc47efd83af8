import { Elysia } from 'elysia'
import type { Authenticator } from '../auth/authenticator'
import type { Permission } from '../auth/permissions'
import type { Principal } from '../auth/principal'
import { forbidden, notFound } from '../errors'

/** Route patterns whose `:id` names an organisation: the caller may only name its own. */
const ORG_PATH = '/v1/organization/:id'

interface GateContext {
  request: Request
  route: string
  params: Record<string, string | undefined>
}

/**
 * Authentication and permission are decided in the parse and transform hooks, which Elysia runs before
 * it validates the body, params or query: a caller without the right never learns a route's schema
 * from a validation error. Parse runs only for requests with a body, transform for every request, so
 * both call the gate and the second call finds the verdict already made.
 */
const verdicts = new WeakMap<Request, Promise<Principal>>()

function gate(authenticator: Authenticator, ctx: GateContext, permission: Permission | null): Promise<Principal> {
  let verdict = verdicts.get(ctx.request)
  if (verdict === undefined) {
    verdict = authenticator.authenticate(ctx.request.headers).then((principal) => {
      // Another organisation's id is "not found", never "forbidden", whoever asks: checked before the
      // permission so the answer about another organisation is the same for every caller.
      if (ctx.route.startsWith(ORG_PATH) && ctx.params.id !== principal.orgId) throw notFound('organization')
      if (permission !== null && !principal.permissions.has(permission)) {
        throw forbidden(
          `this route needs the ${permission} permission, which this ${principal.kind === 'api_key' ? 'API key' : 'role'} does not hold`,
        )
      }
      return principal
    })
    verdicts.set(ctx.request, verdict)
  }
  return verdict
}

/** The `permission` and `authenticated` macros; a handler that uses either receives a typed `principal`. */
export const authz = (authenticator: Authenticator) =>
  new Elysia({ name: 'authz' }).macro({
    permission: (permission: Permission) => ({
      detail: { security: [{ bearer: [] }], 'x-permission': permission } as Record<string, unknown>,
      parse: async (ctx) => {
        await gate(authenticator, ctx, permission)
      },
      transform: async (ctx) => {
        await gate(authenticator, ctx, permission)
      },
      resolve: async (ctx) => ({ principal: await gate(authenticator, ctx, permission) }),
    }),
    authenticated: (enabled: true) => ({
      detail: { security: [{ bearer: [] }] } as Record<string, unknown>,
      parse: async (ctx) => {
        if (enabled) await gate(authenticator, ctx, null)
      },
      transform: async (ctx) => {
        if (enabled) await gate(authenticator, ctx, null)
      },
      resolve: async (ctx) => ({ principal: await gate(authenticator, ctx, null) }),
    }),
  })

export type Authz = ReturnType<typeof authz>
