import type { Principal } from '../../auth/principal'
import { requireGatewayScope } from '../../auth/scopes'
import type { OrgKeySource, OrgProviderKey } from '../../directory/connections'
import { defaultBaseUrl, type OperatorProviders, type ProviderCredentials } from '../../directory/providers'
import { badRequest, forbidden } from '../../errors'
import type { ValueOrPromise } from '../../util/value-or-promise'
import type { ProviderAdapter } from '../providers/provider'
import { operatorKeyId } from '../routing/key-health'

/** A key a call may run on: one of the organisation's (weighted), or the operator's, billed to the organisation's credits. */
export interface KeyCandidate {
  /** The provider key's id, or `operator:<provider>`: what the key's cool-down is kept under. */
  id: string
  weight: number
  credentials: ProviderCredentials
  ptb: boolean
}

/**
 * The keys a call may run on. A proxy key uses the one provider key it is bound to, and a chain's step
 * may name one; other callers share the organisation's keys for the provider by their weights; only
 * without one does the operator's key serve, and then the call is billed to the organisation's credits (PTB).
 */
export function keyCandidates(
  sources: { operator: OperatorProviders; orgKeys: OrgKeySource },
  principal: Principal,
  provider: ProviderAdapter,
  model: string,
  stepKeyId?: string,
): ValueOrPromise<KeyCandidate[]> {
  const boundId = principal.boundProviderKeyId ?? stepKeyId
  const candidates = (own: readonly (OrgProviderKey | null)[]) =>
    candidatesOf(sources.operator[provider.name], principal, provider, model, stepKeyId, own)
  if (boundId) return sources.orgKeys.byId(principal.orgId, boundId).then((key) => candidates([key]))
  // The organisation's keys are usually in the short cache: then nothing is awaited.
  const cached = sources.orgKeys.cachedKeysFor(principal.orgId, provider.name)
  return cached === undefined ? sources.orgKeys.keysFor(principal.orgId, provider.name).then(candidates) : candidates(cached)
}

function candidatesOf(
  operator: ProviderCredentials | undefined,
  principal: Principal,
  provider: ProviderAdapter,
  model: string,
  stepKeyId: string | undefined,
  own: readonly (OrgProviderKey | null)[],
): KeyCandidate[] {
  const bound = own[0]
  if (principal.boundProviderKeyId && bound?.provider !== provider.name) {
    throw forbidden(
      `this proxy key reaches only provider ${bound?.provider ?? 'none'}; model ${model} is served by ${provider.name}`,
    )
  }
  if (stepKeyId && bound?.provider !== provider.name)
    throw badRequest(`the chain's provider key ${stepKeyId} is gone, or is not a ${provider.name} key`)
  const keys = own.filter((key) => key !== null)
  if (keys.length > 0)
    return keys.map((key) => ({
      id: key.id,
      weight: key.weight,
      credentials: credentialsOf(key, operator),
      ptb: false,
    }))
  if (!operator || (!operator.apiKey && provider.requiresKey(operator))) {
    throw badRequest(
      `no key is configured for provider ${provider.name}: add one with POST /v1/api-keys/provider-key, or the operator configures it (see the README's provider variables)`,
    )
  }
  return [{ id: operatorKeyId(provider.name), weight: 1, credentials: operator, ptb: true }]
}

/**
 * Files and batches run on the organisation's own key only: the provider bills their use later, to
 * that key's account, which gw cannot charge to credits; and on one shared operator key, every
 * organisation would see every other's files. A proxy key uses the provider key it is bound to.
 */
export async function ownCredentials(
  orgKeys: OrgKeySource,
  principal: Principal,
  provider: ProviderAdapter,
  operator: ProviderCredentials,
): Promise<ProviderCredentials> {
  const own = principal.boundProviderKeyId
    ? await orgKeys.byId(principal.orgId, principal.boundProviderKeyId)
    : await orgKeys.newestFor(principal.orgId, provider.name)
  if (!own || own.provider !== provider.name) {
    throw badRequest(
      `files and batches run on this organization's own ${provider.name} key (add one with POST /v1/api-keys/provider-key): the provider bills them later, to that key`,
    )
  }
  return credentialsOf(own, operator)
}

/**
 * An organisation's key, at its own base URL (held to the egress policy), else at the operator's
 * address for the provider, else at the provider's public one.
 */
function credentialsOf(key: OrgProviderKey, operator: ProviderCredentials | undefined): ProviderCredentials {
  const settings = key.settings ?? {}
  if (key.baseUrl !== null)
    return { ...settings, apiKey: key.apiKey, baseUrl: key.baseUrl, organizationBaseUrl: true, organizationKey: true }
  // The operator's address for a regional provider is for its own region: the key's own region decides.
  const regional = settings.region !== undefined || settings.location !== undefined
  const baseUrl = (!regional && operator?.baseUrl) || defaultBaseUrl(key.provider, settings)
  return { ...settings, apiKey: key.apiKey, baseUrl, organizationKey: true }
}

/**
 * A key limited to some models may not reach files and batches: a batch runs whatever models its
 * file names, which gw cannot check. A key limited to providers must name this one.
 */
export function requireProviderApiScope(principal: Principal, provider: string): void {
  requireGatewayScope(principal)
  const scopes = principal.keyScopes
  if (scopes?.providers && !scopes.providers.has(provider)) throw forbidden(`this API key lacks the scope "provider:${provider}"`)
  if (scopes?.models) throw forbidden('this API key is limited to some models; files and batches can run any model')
}
