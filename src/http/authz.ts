import { Elysia } from 'elysia'
import type { Authenticator } from '../auth/authenticator'
import { MEMBER_PERMISSIONS, type Permission } from '../auth/permissions'
import type { Principal } from '../auth/principal'
import { requireGatewayScope } from '../auth/scopes'
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

/** What a route asks of its caller: a permission of the catalogue, the gateway scope, or just a credential. */
type Requirement = Permission | 'gateway' | 'authenticated'

function refusal(principal: Principal, permission: Permission): Error {
  if (principal.kind === 'session')
    return forbidden(`this route needs the ${permission} permission, which this role does not hold`)
  return (MEMBER_PERMISSIONS as readonly string[]).includes(permission)
    ? forbidden(`this API key lacks the scope "${permission}"`)
    : forbidden(`this route needs the ${permission} permission; API keys hold only the Member permissions`)
}

function gate(authenticator: Authenticator, ctx: GateContext, requirement: Requirement): Promise<Principal> {
  let verdict = verdicts.get(ctx.request)
  if (verdict === undefined) {
    verdict = authenticator.authenticate(ctx.request.headers).then((principal) => {
      // Another organisation's id is "not found", never "forbidden", whoever asks: checked before the
      // permission so the answer about another organisation is the same for every caller.
      if (ctx.route.startsWith(ORG_PATH) && ctx.params.id !== principal.orgId) throw notFound('organization')
      if (requirement === 'gateway') requireGatewayScope(principal)
      else if (requirement !== 'authenticated' && !principal.permissions.has(requirement)) throw refusal(principal, requirement)
      return principal
    })
    verdicts.set(ctx.request, verdict)
  }
  return verdict
}

/**
 * The `permission`, `gateway` and `authenticated` macros; a handler that uses one receives a typed
 * `principal`. Each runs the same gate in the parse, transform and resolve hooks.
 */
export const authz = (authenticator: Authenticator) => {
  const hooks = (requirement: Requirement) => ({
    parse: async (ctx: GateContext) => {
      await gate(authenticator, ctx, requirement)
    },
    transform: async (ctx: GateContext) => {
      await gate(authenticator, ctx, requirement)
    },
    resolve: async (ctx: GateContext) => ({ principal: await gate(authenticator, ctx, requirement) }),
  })
  const bearer = { security: [{ bearer: [] }] }
  return new Elysia({ name: 'authz' }).macro({
    permission: (permission: Permission) => ({
      detail: { ...bearer, 'x-permission': permission } as Record<string, unknown>,
      ...hooks(permission),
    }),
    gateway: (_enabled: true) => ({
      detail: { ...bearer, 'x-scope': 'gateway' } as Record<string, unknown>,
      ...hooks('gateway'),
    }),
    authenticated: (_enabled: true) => ({ detail: bearer as Record<string, unknown>, ...hooks('authenticated') }),
  })
}

export type Authz = ReturnType<typeof authz>
