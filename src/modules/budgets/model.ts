import { t } from 'elysia'
import { SeriesPoint, timeBodyWith } from '../../query/model'
import type { BudgetAction } from '../../store/repositories/budget-actions'
import { oneOf } from '../../util/typebox'

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
