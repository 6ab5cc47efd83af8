import type { Principal } from '../../auth/principal'
import { badRequest, forbidden } from '../../errors'
import type { OrgKeySource, ProviderAdapter, ProviderCredentials, ProviderName } from '../providers/provider'

/** The key a call runs on, and whether it is billed to the organisation's credits (the operator's key). */
export interface ChosenCredentials {
  credentials: ProviderCredentials
  ptb: boolean
}

/**
 * A proxy key uses the one provider key it is bound to; other callers use their organisation's newest
 * key for the provider; only without one does the operator's key serve, and then the call is billed
 * to the organisation's credits (PTB).
 */
export async function chooseCredentials(
  sources: { operator: Record<ProviderName, ProviderCredentials>; orgKeys: OrgKeySource },
  principal: Principal,
  provider: ProviderAdapter,
  model: string,
): Promise<ChosenCredentials> {
  const operator = sources.operator[provider.name]
  const own = principal.boundProviderKeyId
    ? await sources.orgKeys.byId(principal.orgId, principal.boundProviderKeyId)
    : await sources.orgKeys.newestFor(principal.orgId, provider.name)
  if (principal.boundProviderKeyId && own?.provider !== provider.name) {
    throw forbidden(
      `this proxy key reaches only provider ${own?.provider ?? 'none'}; model ${model} is served by ${provider.name}`,
    )
  }
  if (own) return { credentials: { apiKey: own.apiKey, baseUrl: own.baseUrl ?? operator.baseUrl }, ptb: false }
  if (!operator.apiKey && provider.requiresKey(operator)) {
    throw badRequest(
      `no key is configured for provider ${provider.name}: add one with POST /v1/api-keys/provider-key, or the operator sets ${provider.name.toUpperCase()}_API_KEY`,
    )
  }
  return { credentials: operator, ptb: true }
}
