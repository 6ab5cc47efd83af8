import { badRequest, forbidden } from '../errors'
import { MEMBER_PERMISSIONS, PERMISSIONS, type Permission } from './permissions'
import type { Principal } from './principal'

/**
 * API-key scopes (spec 5.3 rule 2; the format is ours, docs/decisions.md). A key's scopes are a list of
 * strings of two kinds, each of which only narrows:
 *
 * - capabilities: `gateway` (dispatch and the gateway routes), `traffic.read`, `traffic.annotate`;
 *   with none listed the key has them all. `org.read` is always held.
 * - allowlists: `provider:<name>` and `model:<id>` (a trailing `*` matches a prefix); with none of a
 *   kind listed, every provider or model is allowed.
 *
 * An empty list therefore means every Member permission, anywhere. No scope can reach beyond Member.
 */
export const CAPABILITY_SCOPES = ['gateway', 'traffic.read', 'traffic.annotate'] as const
export type CapabilityScope = (typeof CAPABILITY_SCOPES)[number]

export interface KeyScopes {
  capabilities?: ReadonlySet<CapabilityScope>
  providers?: ReadonlySet<string>
  models?: readonly string[]
}

const MAX_SCOPES = 100
const ALLOWLIST = /^(provider|model):([A-Za-z0-9._:/*-]{1,200})$/

/** Checks a list a caller wants to set; a scope beyond Member, or one we do not know, is a 400. */
export function validateScopes(scopes: readonly string[]): string[] {
  if (scopes.length > MAX_SCOPES) throw badRequest(`at most ${MAX_SCOPES} scopes`)
  for (const scope of scopes) {
    if ((CAPABILITY_SCOPES as readonly string[]).includes(scope) || ALLOWLIST.test(scope)) continue
    if ((PERMISSIONS as readonly string[]).includes(scope)) {
      throw badRequest(
        `scope "${scope}" is refused: an API key never holds more than the Member permissions (org.read, traffic.read, traffic.annotate)`,
      )
    }
    throw badRequest(
      `unknown scope "${scope}"; allowed: gateway, traffic.read, traffic.annotate, provider:<name>, model:<id or prefix*>`,
    )
  }
  return [...new Set(scopes)]
}

/** Reads stored scopes; anything unrecognised narrows to nothing rather than widening. */
export function parseScopes(scopes: readonly string[]): KeyScopes {
  const capabilities = new Set<CapabilityScope>()
  const providers = new Set<string>()
  const models: string[] = []
  for (const scope of scopes) {
    if ((CAPABILITY_SCOPES as readonly string[]).includes(scope)) capabilities.add(scope as CapabilityScope)
    else if (scope.startsWith('provider:')) providers.add(scope.slice('provider:'.length))
    else if (scope.startsWith('model:')) models.push(scope.slice('model:'.length))
  }
  return {
    ...(capabilities.size > 0 ? { capabilities } : {}),
    ...(providers.size > 0 ? { providers } : {}),
    ...(models.length > 0 ? { models } : {}),
  }
}

/** API keys carry no role: Member permissions, narrowed by the key's capability scopes (spec 5.3 rules 1 and 2). */
export function apiKeyPermissions(scopes: KeyScopes): Set<Permission> {
  const granted = new Set<Permission>(['org.read'])
  for (const p of MEMBER_PERMISSIONS)
    if (!scopes.capabilities || (scopes.capabilities as ReadonlySet<string>).has(p)) granted.add(p)
  return granted
}

const modelAllowed = (patterns: readonly string[], model: string) =>
  patterns.some((p) => (p.endsWith('*') ? model.startsWith(p.slice(0, -1)) : p === model))

/** The gateway's scope checks: may this principal dispatch, and to this provider and model? A refusal names the scope. */
export function requireGatewayScope(principal: Principal, target?: { provider: string; model: string }): void {
  const scopes = principal.keyScopes
  if (!scopes) return
  if (scopes.capabilities && !scopes.capabilities.has('gateway')) throw forbidden('this API key lacks the scope "gateway"')
  if (!target) return
  if (scopes.providers && !scopes.providers.has(target.provider)) {
    throw forbidden(`this API key lacks the scope "provider:${target.provider}"`)
  }
  if (scopes.models && !modelAllowed(scopes.models, target.model))
    throw forbidden(`this API key lacks a scope "model:..." matching ${target.model}`)
}
