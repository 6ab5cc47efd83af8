import { TIERS } from '../../auth/tiers'
import { DomainName } from '../../http/schema'
import { Maybe } from '../../query/model'
import { oneOf, t } from '../../util/typebox'

export const OrgParams = t.Object({ id: t.String() })

export const SsoBody = t.Object(
  {
    issuer: t.String({ pattern: '^https?://', maxLength: 2000, error: 'issuer must be an http(s) URL' }),
    clientId: t.String({ minLength: 1, maxLength: 500 }),
    clientSecret: t.Optional(t.String({ minLength: 1, maxLength: 4096 })),
    domain: t.Optional(DomainName),
  },
  { additionalProperties: false },
)
export type SsoInput = typeof SsoBody.static

export const EnforceBody = t.Object({ enforced: t.Boolean() }, { additionalProperties: false })

export const Entitlement = t.Object({
  sso: t.Boolean({ description: "whether the organization's tier includes SSO" }),
  requiredTier: t.Literal('enterprise'),
  tier: oneOf(TIERS),
})

export const SsoSettings = t.Object({
  issuer: t.String(),
  clientId: t.String(),
  clientSecret: t.String({ description: 'masked: a hint of the secret, never the secret' }),
  domain: Maybe(t.String()),
  domainVerified: t.Boolean(),
  enforced: t.Boolean(),
  updatedAt: t.String({ format: 'date-time' }),
})

export const SsoRemoved = t.Object({ deleted: t.Literal(true) })

/**
 * What the discovery check found: either the issuer's document, its fields as the issuer wrote them
 * (any JSON value, null when absent), or why there was none.
 */
export const SsoTestReport = t.Union([
  t.Object({
    ok: t.Boolean({ description: 'the issuer matches and names an authorization and a token endpoint' }),
    url: t.String(),
    issuer: t.Unknown(),
    issuerMatches: t.Boolean(),
    authorizationEndpoint: t.Unknown(),
    tokenEndpoint: t.Unknown(),
    jwksUri: t.Unknown(),
  }),
  t.Object({ ok: t.Literal(false), url: t.String(), error: t.String() }),
])

export const DomainVerification = t.Object({
  domain: t.String(),
  verified: t.Boolean(),
  record: t.String({ description: 'the TXT record to publish the challenge at' }),
  value: t.Optional(t.String({ description: 'the challenge; absent once the domain is verified' })),
})

export const Enforcement = t.Object({ enforced: t.Boolean() })
