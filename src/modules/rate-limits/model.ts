import { t } from '../../util/typebox'

export const RuleBody = t.Object(
  {
    quota: t.Number({ exclusiveMinimum: 0, description: 'requests, or cents, per window' }),
    windowSeconds: t.Optional(t.Integer({ minimum: 1, description: 'default 3600' })),
    // Checked by validatePolicy, whose messages name the allowed values.
    unit: t.Optional(t.String({ description: 'request (default) or cents' })),
    segment: t.Optional(t.String({ description: 'global (default), user, prop or model' })),
    property: t.Optional(t.String({ description: 'for segment prop: the Gw-Property-<name> that supplies the value' })),
  },
  { additionalProperties: false },
)
export type RuleInput = typeof RuleBody.static

export const RuleParams = t.Object({ ruleId: t.String({ minLength: 1, maxLength: 64 }) })

export const Rule = t.Object({
  id: t.String(),
  quota: t.Number(),
  windowSeconds: t.Integer(),
  unit: t.String(),
  segment: t.String(),
  property: t.Nullable(t.String()),
  policy: t.String({ description: 'the rule as a Gw-RateLimit-Policy value' }),
  createdAt: t.String({ format: 'date-time' }),
  updatedAt: t.String({ format: 'date-time' }),
})
