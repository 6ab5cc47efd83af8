import { PERMISSIONS } from '../../auth/permissions'
import { TIERS } from '../../auth/tiers'
import { MAX_RETENTION_DAYS } from '../../spend/retention'
import { oneOf, t } from '../../util/typebox'

export const OrgParams = t.Object({ id: t.String() })

const OnboardingData = t.Record(t.String(), t.Unknown(), { description: 'free-form onboarding answers' })

export const RenameBody = t.Object({ name: t.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false })

export const StartOnboardingBody = t.Object({ data: t.Optional(OnboardingData) }, { additionalProperties: false })

export const UpdateOnboardingBody = t.Object(
  { step: t.Optional(t.String({ maxLength: 100 })), completed: t.Optional(t.Boolean()), data: t.Optional(OnboardingData) },
  { additionalProperties: false },
)
export type UpdateOnboardingInput = typeof UpdateOnboardingBody.static

export const AcceptTermsBody = t.Object({ version: t.String({ minLength: 1, maxLength: 50 }) }, { additionalProperties: false })

export const BodyRetentionBody = t.Object(
  {
    mode: t.Union([t.Literal('none'), t.Literal('days')], { error: 'mode must be none (store no bodies) or days' }),
    days: t.Optional(t.Integer({ minimum: 1, maximum: 3650 })),
  },
  { additionalProperties: false },
)
export type BodyRetentionInput = typeof BodyRetentionBody.static

export const RequestRetentionBody = t.Object(
  {
    mode: t.Union([t.Literal('default'), t.Literal('days')], {
      error: "mode must be default (the operator's retention) or days",
    }),
    days: t.Optional(
      t.Integer({
        minimum: 1,
        maximum: MAX_RETENTION_DAYS,
        error: `days must be a whole number of days from 1 to ${MAX_RETENTION_DAYS}`,
      }),
    ),
  },
  { additionalProperties: false },
)
export type RequestRetentionInput = typeof RequestRetentionBody.static

export const PiiRedactionBody = t.Object({ redact: t.Boolean() }, { additionalProperties: false })

export const StreamMetaBody = t.Object(
  {
    frame: t.Boolean({
      description: 'true: every stream ends with the gw frame; false: only calls sending Gw-Stream-Meta: frame',
    }),
  },
  { additionalProperties: false },
)

export const MyPermissions = t.Object({
  principal: oneOf(['api_key', 'session']),
  role: t.Nullable(t.String({ description: 'owner, admin, member or a custom role id; null for an API key' })),
  permissions: t.Array(oneOf(PERMISSIONS), { description: 'in catalogue order' }),
})

export const OrganizationSettings = t.Object({
  id: t.String(),
  name: t.Optional(t.String()),
  tier: t.Optional(oneOf(TIERS)),
  onboarding: t.Nullable(t.Record(t.String(), t.Unknown())),
  terms: t.Nullable(
    t.Object({
      acceptedAt: t.String({ format: 'date-time' }),
      acceptedBy: t.Nullable(t.String()),
      version: t.Nullable(t.String()),
    }),
  ),
  bodyRetention: t.Union([t.Object({ mode: t.Literal('none') }), t.Object({ mode: t.Literal('days'), days: t.Integer() })]),
  requestRetention: t.Object(
    {
      days: t.Nullable(t.Integer({ description: 'how many days request records are kept; null: forever' })),
      own: t.Nullable(t.Integer({ description: "the organization's own setting; null: the operator's default" })),
      operatorDays: t.Nullable(
        t.Integer({ description: 'the most days this gw keeps request records (GW_REQUEST_RETENTION_DAYS); null: no bound' }),
      ),
      budgetWindowDays: t.Nullable(
        t.Integer({ description: 'the longest budget window, in days: records are never deleted before it ends' }),
      ),
    },
    { description: 'how long request records, and what hangs off them, are kept' },
  ),
  piiRedaction: t.Boolean(),
  streamMetaFrame: t.Boolean({ description: 'streams end with the gw metadata frame even when a call does not ask for it' }),
})
