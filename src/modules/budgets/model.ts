import { NextCursor, type PageSize, Paging } from '../../http/schema'
import { SeriesPoint, timeBodyWith } from '../../query/model'
import type { BudgetAction } from '../../store/repositories/budget-actions'
import { oneOf, t } from '../../util/typebox'

export const BUDGET_ACTIONS = ['alert', 'block', 'downgrade', 'throttle'] as const satisfies readonly BudgetAction['action'][]

export const ActionsBody = timeBodyWith({})
export type ActionsInput = typeof ActionsBody.static

export const ActionsBreakdown = t.Array(
  t.Object({
    action: oneOf(BUDGET_ACTIONS),
    scope: t.String(),
    count: t.Number(),
    amount: t.Number({ description: 'USD: the spend that set the actions off' }),
  }),
)

export const ActionsOverTime = t.Array(SeriesPoint({ values: t.Record(t.String(), t.Number()) }))

export const SCOPE_KINDS = ['org', 'team', 'member', 'key', 'customer', 'model', 'provider'] as const
export const METRICS = ['usd', 'tokens', 'requests'] as const
export const LIMIT_ACTIONS = ['block', 'downgrade', 'alert'] as const
export const CALENDAR_WINDOWS = ['day', 'week', 'month'] as const
export const ALERT_CHANNELS = ['webhook', 'slack'] as const

/** The longest fixed window, and what a sliding (velocity) window may span. */
export const MAX_WINDOW_SECONDS = 366 * 86_400
export const VELOCITY_SECONDS = { minimum: 10, maximum: 3600 } as const

const ScopeId = t.String({
  minLength: 1,
  maxLength: 256,
  pattern: '^[^\\u0000-\\u001f\\u007f]+$',
  error: 'scope.id must be 1 to 256 characters without control characters',
})

export const Scope = t.Object(
  {
    kind: oneOf(SCOPE_KINDS, { error: `scope.kind must be one of ${SCOPE_KINDS.join(', ')}` }),
    id: t.Optional(ScopeId),
  },
  {
    additionalProperties: false,
    description: 'What the limit covers. Without an id (other than org), it applies to every value of the kind, each on its own',
  },
)

export const Window = t.Union(
  [
    oneOf(CALENDAR_WINDOWS),
    t.Object(
      { seconds: t.Integer({ minimum: 1, maximum: MAX_WINDOW_SECONDS }) },
      { additionalProperties: false, description: 'consecutive windows of this many seconds, counted from the Unix epoch' },
    ),
  ],
  { error: `window must be day, week, month or {"seconds": 1 to ${MAX_WINDOW_SECONDS}}` },
)

const Action = oneOf(LIMIT_ACTIONS, { error: 'action must be block, downgrade or alert' })
const Metric = oneOf(METRICS, { error: 'metric must be usd, tokens or requests' })
/** 0 is a limit too: nothing more may be spent (a kill switch). */
const Amount = t.Number({
  minimum: 0,
  maximum: 1e12,
  error: 'limit must be a number from 0: USD for usd, a whole number of tokens or requests otherwise',
})
const LimitId = t.String({ minLength: 1, maxLength: 64 })

export const WindowLimitBody = t.Object(
  {
    id: t.Optional(LimitId),
    scope: Scope,
    metric: Metric,
    limit: Amount,
    window: Window,
    action: t.Optional(Action),
  },
  { additionalProperties: false },
)
export type WindowLimitInput = typeof WindowLimitBody.static

export const VelocityLimitBody = t.Object(
  {
    id: t.Optional(LimitId),
    scope: Scope,
    maxUsd: t.Number({ minimum: 0, maximum: 1e9, error: 'maxUsd must be a number of USD from 0 to 1,000,000,000' }),
    windowSeconds: t.Integer({
      ...VELOCITY_SECONDS,
      error: `windowSeconds must be a whole number from ${VELOCITY_SECONDS.minimum} to ${VELOCITY_SECONDS.maximum}`,
    }),
    action: t.Optional(Action),
  },
  { additionalProperties: false },
)
export type VelocityLimitInput = typeof VelocityLimitBody.static

/** The shorthands: a window limit on one member or customer, `usd` per `month` unless told. */
const shorthand = {
  metric: t.Optional(Metric),
  limit: Amount,
  window: t.Optional(Window),
  action: t.Optional(Action),
}
export const MemberBudgetBody = t.Object(shorthand, { additionalProperties: false })
export type MemberBudgetInput = typeof MemberBudgetBody.static
export const MemberParams = t.Object({ memberUserId: t.String({ minLength: 1, maxLength: 64 }) })

const CustomerId = t.String({
  minLength: 1,
  maxLength: 256,
  pattern: '^[^\\u0000-\\u001f\\u007f]+$',
  error: 'customerId must be 1 to 256 characters without control characters',
})
export const CustomerBudgetBody = t.Object({ customerId: CustomerId, ...shorthand }, { additionalProperties: false })
export type CustomerBudgetInput = typeof CustomerBudgetBody.static
/** The customer may be named in the query or in a JSON body: clients differ in what DELETE can carry. */
export const CustomerQuery = t.Object({ customerId: t.Optional(CustomerId) })
export const CustomerDeleteBody = t.Optional(t.Object({ customerId: CustomerId }, { additionalProperties: false }))

export const LimitParams = t.Object({ id: LimitId })
export const MappingParams = t.Object({ mappingId: LimitId })

export const WindowSettingsBody = t.Object(
  {
    timezone: t.Optional(t.String({ minLength: 1, maxLength: 64, description: 'an IANA time zone, such as Europe/Paris' })),
    weekStart: t.Optional(t.Integer({ minimum: 1, maximum: 7, error: 'weekStart must be 1 (Monday) to 7 (Sunday)' })),
    monthStartDay: t.Optional(t.Integer({ minimum: 1, maximum: 28, error: 'monthStartDay must be 1 to 28' })),
  },
  { additionalProperties: false },
)
export type WindowSettingsInput = typeof WindowSettingsBody.static
export const WindowSettings = t.Object({ timezone: t.String(), weekStart: t.Integer(), monthStartDay: t.Integer() })

export const AlertConfigBody = t.Object(
  {
    thresholds: t.Array(t.Integer({ minimum: 1, maximum: 100, error: 'thresholds must be percentages from 1 to 100' }), {
      maxItems: 10,
      uniqueItems: true,
      error: 'thresholds must be up to 10 different percentages from 1 to 100',
    }),
    channels: t.Optional(
      t.Array(oneOf(ALERT_CHANNELS, { error: 'channels may be webhook and slack' }), { maxItems: 2, uniqueItems: true }),
    ),
  },
  { additionalProperties: false },
)
export type AlertConfigInput = typeof AlertConfigBody.static
export const AlertConfig = t.Object({
  thresholds: t.Array(t.Integer()),
  channels: t.Array(t.String()),
  configured: t.Boolean({ description: 'false: the defaults (breaches only, to subscribed webhooks)' }),
})

export const DowngradeMappingBody = t.Object(
  {
    fromModel: t.String({
      minLength: 1,
      maxLength: 256,
      pattern: '^[^\\u0000-\\u001f\\u007f]+$',
      error: 'fromModel must be a model name or a glob (* for any run of characters)',
    }),
    toModel: t.String({
      minLength: 1,
      maxLength: 256,
      pattern: '^[^*\\u0000-\\u001f\\u007f]+$',
      error: 'toModel must be a model name',
    }),
    atPercent: t.Optional(t.Integer({ minimum: 1, maximum: 100, error: 'atPercent must be 1 to 100' })),
  },
  { additionalProperties: false },
)
export type DowngradeMappingInput = typeof DowngradeMappingBody.static
export const DowngradeMapping = t.Object({
  id: t.String(),
  fromModel: t.String(),
  toModel: t.String(),
  atPercent: t.Nullable(t.Integer()),
  createdAt: t.String({ format: 'date-time' }),
})

export const NotifyBody = t.Object(
  {
    message: t.Optional(t.String({ maxLength: 2000 })),
    limitId: t.Optional(LimitId),
  },
  { additionalProperties: false },
)
export type NotifyInput = typeof NotifyBody.static

export const BreachBody = t.Object(
  {
    message: t.Optional(
      t.String({ minLength: 1, maxLength: 2000, error: 'message must say what was breached (1 to 2000 characters)' }),
    ),
    limitId: t.Optional(LimitId),
    scope: t.Optional(Scope),
    spent: t.Optional(t.Number({ minimum: 0, maximum: 1e12 })),
  },
  { additionalProperties: false },
)
export type BreachInput = typeof BreachBody.static

export const BREACHES_PAGE: PageSize = { maxLimit: 200, defaultLimit: 50 }
const { limit: breachesLimit, cursor } = Paging(BREACHES_PAGE)

export const BreachesQuery = t.Object({ limit: breachesLimit, cursor }, { additionalProperties: false })
export type BreachesPage = typeof BreachesQuery.static

const LimitScope = t.Object({ kind: t.String(), id: t.Nullable(t.String()) })

export const Limit = t.Object({
  id: t.String(),
  kind: oneOf(['window', 'velocity']),
  scope: LimitScope,
  metric: t.String(),
  limit: t.Number({ description: 'USD for usd; tokens or requests otherwise' }),
  window: t.Union([t.String(), t.Object({ seconds: t.Integer() })]),
  action: t.String(),
  createdAt: t.String({ format: 'date-time' }),
  updatedAt: t.String({ format: 'date-time' }),
})

export const LimitStatus = t.Object({
  ...Limit.properties,
  spent: t.Nullable(t.Number()),
  reserved: t.Nullable(t.Number()),
  remaining: t.Nullable(t.Number()),
  windowStart: t.Nullable(t.String({ format: 'date-time' })),
  windowEnd: t.Nullable(t.String({ format: 'date-time' })),
  status: oneOf(['ok', 'warning', 'exceeded', 'per_value'], {
    description: 'per_value: the limit applies to each value of its kind on its own; see GET /v1/budget/customers for customers',
  }),
})

export const Summary = t.Array(LimitStatus)

export const BudgetSettings = t.Object({
  windowSettings: WindowSettings,
  alertConfig: AlertConfig,
  downgradeMappings: t.Array(DowngradeMapping),
})

export const Notice = t.Object({
  id: t.String(),
  kind: t.String(),
  limitId: t.Nullable(t.String()),
  scope: t.Object({ kind: t.Nullable(t.String()), id: t.Nullable(t.String()) }),
  metric: t.Nullable(t.String()),
  windowStart: t.Nullable(t.String({ format: 'date-time' })),
  threshold: t.Nullable(t.Integer()),
  spent: t.Nullable(t.Number()),
  limit: t.Nullable(t.Number()),
  message: t.Nullable(t.String()),
  createdBy: t.Nullable(t.String()),
  createdAt: t.String({ format: 'date-time' }),
})

export const Breaches = t.Object({ breaches: t.Array(Notice), nextCursor: NextCursor })

export const Sent = t.Object({ id: t.String(), deliveries: t.Integer({ description: 'outbox rows written' }) })
