import type { TObject } from '@sinclair/typebox'
import { oneOf, t } from '../../util/typebox'

export const INTEGRATION_TYPES = ['slack', 'stripe'] as const

/**
 * What each type of integration takes: its settings' schema, which of them are secrets (sealed,
 * shown afterwards masked), and which must be there once it is saved (any one of `needsOneOf`).
 */
export const INTEGRATION_KINDS: Record<
  (typeof INTEGRATION_TYPES)[number],
  { settings: TObject; secrets: readonly string[]; needsOneOf: readonly string[] }
> = {
  slack: {
    settings: t.Object(
      {
        webhookUrl: t.Optional(
          t.String({ pattern: '^https://', maxLength: 2000, error: 'webhookUrl must be a Slack incoming-webhook https:// URL' }),
        ),
        botToken: t.Optional(
          t.String({ pattern: '^xox[a-z]-[A-Za-z0-9-]{10,250}$', error: 'botToken must be a Slack token (xoxb-...)' }),
        ),
        channel: t.Optional(t.String({ pattern: '^[#@]?[A-Za-z0-9_.-]{1,80}$', error: 'channel must be a channel name or id' })),
      },
      { additionalProperties: false },
    ),
    secrets: ['webhookUrl', 'botToken'],
    needsOneOf: ['webhookUrl', 'botToken'],
  },
  stripe: {
    settings: t.Object(
      {
        secretKey: t.Optional(
          t.String({
            pattern: '^(sk|rk)_(test|live)_[A-Za-z0-9]{10,250}$',
            error: 'secretKey must be a Stripe secret or restricted key (sk_... or rk_...)',
          }),
        ),
        meterEventName: t.Optional(
          t.String({ pattern: '^[a-z0-9_]{1,100}$', error: 'meterEventName must be the event name of a Stripe meter' }),
        ),
      },
      { additionalProperties: false },
    ),
    secrets: ['secretKey'],
    needsOneOf: ['secretKey'],
  },
}

export const IntegrationParams = t.Object({ integrationId: t.String({ minLength: 1, maxLength: 64 }) })
export const TypeParams = t.Object({ type: oneOf(INTEGRATION_TYPES, { error: 'type must be slack or stripe' }) })

const Settings = t.Record(t.String({ maxLength: 64 }), t.String({ maxLength: 2000 }), {
  maxProperties: 10,
  description: "the type's settings; an empty string clears one",
})

export const CreateIntegrationBody = t.Object(
  { type: TypeParams.properties.type, settings: Settings, active: t.Optional(t.Boolean()) },
  { additionalProperties: false },
)
export type CreateIntegrationInput = typeof CreateIntegrationBody.static

export const UpdateIntegrationBody = t.Object(
  { settings: t.Optional(Settings), active: t.Optional(t.Boolean()) },
  { additionalProperties: false },
)
export type UpdateIntegrationInput = typeof UpdateIntegrationBody.static

export const IntegrationView = t.Object({
  id: t.String(),
  type: t.String(),
  active: t.Boolean(),
  settings: t.Record(t.String(), t.String(), { description: 'secrets shown masked (first and last four characters)' }),
  secrets: t.Array(t.String(), { description: 'the names of the secret settings that are set' }),
  createdAt: t.String({ format: 'date-time' }),
  updatedAt: t.String({ format: 'date-time' }),
})

export const SlackChannel = t.Object({ id: t.String(), name: t.String(), private: t.Boolean() })

export const TestMeterEventBody = t.Object(
  {
    customerId: t.String({ pattern: '^cus_[A-Za-z0-9]{1,250}$', error: 'customerId must be a Stripe customer id (cus_...)' }),
    value: t.Optional(t.Integer({ minimum: 1, maximum: 1_000_000_000, description: '1 by default' })),
  },
  { additionalProperties: false },
)
export type TestMeterEventInput = typeof TestMeterEventBody.static

export const MeterEventResult = t.Object({ ok: t.Literal(true), identifier: t.String(), eventName: t.String() })
