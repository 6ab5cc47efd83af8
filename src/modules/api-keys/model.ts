import { TIERS } from '../../auth/tiers'
import { oneOf, t } from '../../util/typebox'

const Scopes = t.Array(t.String({ maxLength: 210 }), {
  maxItems: 100,
  description: 'gateway, traffic.read, traffic.annotate, provider:<name>, model:<id or prefix*>; empty = every Member permission',
})

export const CreateKeyBody = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 200 }),
    scopes: t.Optional(Scopes),
    expiresAt: t.Optional(t.String({ format: 'date-time' })),
  },
  { additionalProperties: false },
)

export const UpdateKeyBody = t.Object(
  {
    name: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
    expiresAt: t.Optional(t.Union([t.String({ format: 'date-time' }), t.Null()])),
  },
  { additionalProperties: false },
)

export const ScopesBody = t.Object({ scopes: Scopes }, { additionalProperties: false })

export const KeyParams = t.Object({ apiKeyId: t.String({ minLength: 1, maxLength: 64 }) })

export const CreateProxyKeyBody = t.Object(
  {
    providerKeyId: t.String({ minLength: 1, maxLength: 64 }),
    name: t.String({ minLength: 1, maxLength: 200 }),
    scopes: t.Optional(Scopes),
    expiresAt: t.Optional(t.String({ format: 'date-time' })),
  },
  { additionalProperties: false },
)

export const ProxyKeyParams = t.Object({ proxyKeyId: t.String({ minLength: 1, maxLength: 64 }) })

export type CreateKeyInput = typeof CreateKeyBody.static
export type UpdateKeyInput = typeof UpdateKeyBody.static
export type CreateProxyKeyInput = typeof CreateProxyKeyBody.static

/** What anyone in the organisation may see of a key: never its secret, nor its hash. */
export const ApiKey = t.Object({
  id: t.String(),
  name: t.String(),
  prefix: t.String({ description: 'the start of the key, to recognise it by' }),
  scopes: t.Array(t.String()),
  providerKeyId: t.Nullable(t.String({ description: 'for a proxy key: the one provider key it may use' })),
  createdAt: t.String({ format: 'date-time' }),
  lastUsedAt: t.Nullable(t.String({ format: 'date-time' })),
  expiresAt: t.Nullable(t.String({ format: 'date-time' })),
  revokedAt: t.Nullable(t.String({ format: 'date-time' })),
})

/** A key just created: its secret is in this answer and never again. */
export const IssuedApiKey = t.Object({
  ...ApiKey.properties,
  key: t.String({ description: 'the secret; shown once' }),
})

export const ScopeEntitlement = t.Object({
  tier: oneOf(TIERS),
  capabilities: t.Array(t.String()),
  allowlists: t.Array(t.String({ description: 'the forms an allowlist scope takes' })),
})

export const McpConnection = t.Object({
  id: t.String(),
  userId: t.Nullable(t.String()),
  client: t.String(),
  scopes: t.Array(t.String()),
  createdAt: t.String({ format: 'date-time' }),
  revokedAt: t.Nullable(t.String({ format: 'date-time' })),
})

export const McpUpstreamConnection = t.Object({
  id: t.String(),
  userId: t.Nullable(t.String()),
  serverUrl: t.String(),
  status: t.String(),
  createdAt: t.String({ format: 'date-time' }),
})
