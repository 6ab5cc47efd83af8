import { t } from 'elysia'

const Provider = t.Union([t.Literal('openai'), t.Literal('anthropic')], { error: 'provider must be openai or anthropic' })
const BaseUrl = t.String({ pattern: '^https?://', maxLength: 2000, error: 'baseUrl must be an http:// or https:// URL' })

export const CreateProviderKeyBody = t.Object(
  {
    provider: Provider,
    name: t.String({ minLength: 1, maxLength: 200 }),
    secret: t.String({ minLength: 1, maxLength: 4096 }),
    baseUrl: t.Optional(BaseUrl),
  },
  { additionalProperties: false },
)

export const UpdateProviderKeyBody = t.Object(
  {
    name: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
    secret: t.Optional(t.String({ minLength: 1, maxLength: 4096 })),
    baseUrl: t.Optional(t.Union([BaseUrl, t.Null()])),
  },
  { additionalProperties: false },
)

export const ProviderKeyParams = t.Object({ providerKeyId: t.String({ minLength: 1, maxLength: 64 }) })
export const VaultUpdateParams = t.Object({ id: t.String({ minLength: 1, maxLength: 64 }) })
