import { Elysia } from 'elysia'
import type { AuditRecorder } from '../audit/recorder'
import type { Authenticator } from '../auth/authenticator'
import { catalogueOf } from '../auth/catalogue'
import { MEMBER_PERMISSIONS, type Permission, READ_ONLY_PERMISSIONS } from '../auth/permissions'
import type { Principal } from '../auth/principal'
import { requireGatewayScope } from '../auth/scopes'
import { forbidden, internalError, notFound } from '../errors'
import { parseManagementBody } from './body'
import { sourceIp } from './request-info'

/** Route patterns whose `:id` names an organisation: the caller may only name its own. */
const ORG_PATH = '/v1/organization/:id'

interface GateContext {
  request: Request
  route: string
  params: Record<string, string | undefined> | undefined
}

/**
 * Authentication and permission are decided in the parse and transform hooks, which Elysia runs before
 * it validates the body, params or query: a caller without the right never learns a route's schema
 * from a validation error. Parse runs only for requests with a body, transform for every request, so
 * both call the gate and the second call finds the verdict already made.
 */
const verdicts = new WeakMap<Request, Promise<Principal>>()
/** Who asked, once known, even when they were then refused: the audit records refused writes too. */
const callers = new WeakMap<Request, Principal>()

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/** The mark the `catalogued` macro leaves in a route's detail. */
export const CATALOGUED = 'x-catalogued'

/**
 * `true`, or what the route's audit entries name when its answer names no record of its own: a
 * setting of the whole organisation names the organisation.
 */
export type CatalogueOptions = true | { auditTarget: 'organization' }

/** What a route asks of its caller: the permission the catalogue gives it, the gateway scope, or just a credential. */
type Requirement = 'catalogue' | 'gateway' | 'authenticated'

/** The catalogue's permission for the route a request reached; start-up made sure there is one. */
function permissionFor(request: Request, route: string): Permission {
  const permission = catalogueOf(request.method, route)
  if (permission === undefined) throw internalError()
  return permission
}

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
      callers.set(ctx.request, principal)
      // Another organisation's id is "not found", never "forbidden", whoever asks: checked before the
      // permission so the answer about another organisation is the same for every caller.
      if (ctx.route.startsWith(ORG_PATH) && ctx.params?.id !== principal.orgId) throw notFound('organization')
      if (requirement === 'gateway') requireGatewayScope(principal)
      else if (requirement === 'catalogue') {
        const permission = permissionFor(ctx.request, ctx.route)
        if (!principal.permissions.has(permission)) throw refusal(principal, permission)
      }
      return principal
    })
    verdicts.set(ctx.request, verdict)
  }
  return verdict
}

/**
 * The `catalogued`, `gateway` and `authenticated` macros; a handler that uses one receives a typed
 * `principal`. Each runs the same gate in the parse, transform and resolve hooks.
 */
interface AfterContext extends GateContext {
  set: { status?: number | string }
  responseValue?: unknown
  server: { requestIP(r: Request): { address: string } | null } | null
}

export const authz = (authenticator: Authenticator, recorder: AuditRecorder) => {
  // Every write is audited here, once its answer is known (success or refusal) and before it is sent,
  // so an entry is never missing when the caller has its answer. A route without a handler yet
  // (501) changed nothing and leaves no entry. Returning nothing leaves the answer as it is.
  // Hooks take their context destructured: Elysia reads the parameter list to decide what each request
  // must prepare, and a whole `ctx` would make it parse cookies, query and more for every call.
  const audit =
    (target?: 'organization') =>
    async ({ request, route, params, set, responseValue, server }: AfterContext) => {
      const principal = callers.get(request)
      if (!principal || !WRITE_METHODS.has(request.method)) return
      // A read-only permission's POST routes carry a query in their body and change nothing.
      const permission = catalogueOf(request.method, route)
      if (permission !== undefined && READ_ONLY_PERMISSIONS.has(permission)) return
      const status = responseValue instanceof Response ? responseValue.status : Number(set.status ?? 200)
      if (status === 501) return
      await recorder.record(principal, {
        method: request.method,
        route,
        params,
        status,
        response: responseValue instanceof Response ? undefined : responseValue,
        sourceIp: sourceIp(server, request),
        ...(target === 'organization' ? { target: principal.orgId } : {}),
      })
    }
  const hooks = (requirement: Requirement) => ({
    // The body is read only once the caller may use the route, and never past the management limit.
    parse: async ({ request, route, params, contentType }: GateContext & { contentType: string }) => {
      await gate(authenticator, { request, route, params }, requirement)
      return parseManagementBody({ request, contentType })
    },
    transform: async ({ request, route, params }: GateContext) => {
      await gate(authenticator, { request, route, params }, requirement)
    },
    resolve: async ({ request, route, params }: GateContext) => ({
      principal: await gate(authenticator, { request, route, params }, requirement),
    }),
  })
  const bearer = { security: [{ bearer: [] }] }
  return new Elysia({ name: 'authz' }).macro({
    /**
     * The route needs the permission the route catalogue gives it, stated nowhere else. A macro does
     * not see its route's path, so `x-catalogued` marks the route, and start-up (modules/router.ts)
     * checks that the catalogue holds it and writes its `x-permission` into the document.
     */
    catalogued: (options: CatalogueOptions) => ({
      detail: { ...bearer, [CATALOGUED]: true } as Record<string, unknown>,
      ...hooks('catalogue'),
      mapResponse: audit(options === true ? undefined : options.auditTarget),
    }),
    gateway: (_enabled: true) => ({
      detail: { ...bearer, 'x-scope': 'gateway' } as Record<string, unknown>,
      ...hooks('gateway'),
    }),
    authenticated: (_enabled: true) => ({
      detail: bearer as Record<string, unknown>,
      ...hooks('authenticated'),
      mapResponse: audit(),
    }),
  })
}

export type Authz = ReturnType<typeof authz>
