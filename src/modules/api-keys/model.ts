import { t } from 'elysia'

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
