import { t } from 'elysia'
import { PROVIDER_NAMES } from '../../directory/providers'
import { oneOf } from '../../util/typebox'

const Provider = oneOf(PROVIDER_NAMES, { error: `provider must be one of ${PROVIDER_NAMES.join(', ')}` })
const BaseUrl = t.String({ pattern: '^https?://', maxLength: 2000, error: 'baseUrl must be an http:// or https:// URL' })
/** Shares are relative, so 1000 is room enough to express any split (0.1% steps) without absurd values. */
const MAX_WEIGHT = 1_000
const Weight = t.Integer({
  minimum: 0,
  maximum: MAX_WEIGHT,
  description:
    "the key's share of its provider's calls among the organisation's keys; 0: a standby key, used only when every weighted key is cooling down. 1 by default",
  error: `weight must be an integer from 0 to ${MAX_WEIGHT}`,
})

export const CreateProviderKeyBody = t.Object(
  {
    provider: Provider,
    name: t.String({ minLength: 1, maxLength: 200 }),
    secret: t.String({ minLength: 1, maxLength: 4096 }),
    baseUrl: t.Optional(BaseUrl),
    weight: t.Optional(Weight),
  },
  { additionalProperties: false },
)

export const UpdateProviderKeyBody = t.Object(
  {
    name: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
    secret: t.Optional(t.String({ minLength: 1, maxLength: 4096 })),
    baseUrl: t.Optional(t.Union([BaseUrl, t.Null()])),
    weight: t.Optional(Weight),
  },
  { additionalProperties: false },
)

export const ProviderKeyParams = t.Object({ providerKeyId: t.String({ minLength: 1, maxLength: 64 }) })
export const VaultUpdateParams = t.Object({ id: t.String({ minLength: 1, maxLength: 64 }) })

export type CreateProviderKeyInput = typeof CreateProviderKeyBody.static
export type UpdateProviderKeyInput = typeof UpdateProviderKeyBody.static

/** A provider key as reads show it: the secret masked, never whole. */
export const ProviderKey = t.Object({
  id: t.String(),
  provider: oneOf(PROVIDER_NAMES),
  name: t.String(),
  baseUrl: t.Nullable(t.String()),
  weight: t.Integer(),
  secret: t.String({ description: 'masked: enough to recognise the key, never the key' }),
  createdAt: t.String({ format: 'date-time' }),
  updatedAt: t.String({ format: 'date-time' }),
})
