import { PROVIDER_NAMES } from '../../directory/providers'
import { oneOf, t } from '../../util/typebox'

const Provider = oneOf(PROVIDER_NAMES, { error: `provider must be one of ${PROVIDER_NAMES.join(', ')}` })
const BaseUrl = t.String({ pattern: '^https?://', maxLength: 2000, error: 'baseUrl must be an http:// or https:// URL' })
/** A model name as callers and providers write it (`gpt-4o`, `us.anthropic.claude-sonnet-4-5-20250929-v1:0`). */
const MODEL_NAME = '^[A-Za-z0-9][A-Za-z0-9._:/@-]{0,199}$'

/** Where and as whom the provider is called; which of these a provider takes is checked by the service. */
const Settings = {
  region: t.Optional(
    t.String({ pattern: '^[a-z]{2,}(-[a-z0-9]+)+$', maxLength: 64, error: 'region must be an AWS region, such as us-east-1' }),
  ),
  accessKeyId: t.Optional(
    t.String({
      pattern: '^[A-Z0-9]{16,128}$',
      error: 'accessKeyId must be an AWS access key id (16 to 128 capitals and digits)',
    }),
  ),
  apiVersion: t.Optional(
    t.String({
      pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}(-preview)?$',
      error: 'apiVersion must be an Azure OpenAI API version, such as 2024-10-21',
    }),
  ),
  project: t.Optional(
    t.String({ pattern: '^[a-z][a-z0-9-]{4,61}[a-z0-9]$', error: 'project must be a Google Cloud project id' }),
  ),
  location: t.Optional(
    t.String({
      pattern: '^[a-z]+(-[a-z0-9]+)*$',
      maxLength: 64,
      error: 'location must be a Vertex AI location, such as us-central1 or global',
    }),
  ),
  models: t.Optional(
    t.Record(t.String({ pattern: MODEL_NAME }), t.String({ pattern: MODEL_NAME }), {
      maxProperties: 200,
      // A name that does not match is refused, not let through beside the pattern.
      additionalProperties: false,
      description: "the model names callers use, to the provider's own (an Azure deployment, a Bedrock inference profile)",
      error: 'models must map at most 200 model names to the names the provider serves them under',
    }),
  ),
}
/** Shares are relative, so 1000 is room enough to express any split (0.1% steps) without absurd values. */
const MAX_WEIGHT = 1_000
/** An API key, a secret access key, or a service account's JSON key file (a few kilobytes). */
const Secret = t.String({ minLength: 1, maxLength: 16_384 })
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
    secret: Secret,
    baseUrl: t.Optional(BaseUrl),
    weight: t.Optional(Weight),
    ...Settings,
  },
  { additionalProperties: false },
)

export const UpdateProviderKeyBody = t.Object(
  {
    name: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
    secret: t.Optional(Secret),
    baseUrl: t.Optional(t.Union([BaseUrl, t.Null()])),
    weight: t.Optional(Weight),
    ...Settings,
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
  region: t.Optional(t.String()),
  accessKeyId: t.Optional(t.String()),
  apiVersion: t.Optional(t.String()),
  project: t.Optional(t.String()),
  location: t.Optional(t.String()),
  models: t.Optional(t.Record(t.String(), t.String())),
  createdAt: t.String({ format: 'date-time' }),
  updatedAt: t.String({ format: 'date-time' }),
})
