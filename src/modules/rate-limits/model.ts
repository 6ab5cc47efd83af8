import { t } from 'elysia'

export const RuleBody = t.Object(
  {
    quota: t.Number({ exclusiveMinimum: 0, description: 'requests, or cents, per window' }),
    windowSeconds: t.Optional(t.Integer({ minimum: 1, description: 'default 3600' })),
    unit: t.Optional(t.Union([t.Literal('request'), t.Literal('cents')], { description: 'default request' })),
    segment: t.Optional(
      t.Union([t.Literal('global'), t.Literal('user'), t.Literal('prop'), t.Literal('model')], { description: 'default global' }),
    ),
    property: t.Optional(t.String({ description: 'for segment prop: the Gw-Property-<name> that supplies the value' })),
  },
  { additionalProperties: false },
)

export const RuleParams = t.Object({ ruleId: t.String({ minLength: 1, maxLength: 64 }) })
