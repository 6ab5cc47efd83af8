import { Elysia, t } from 'elysia'
import type { Authz } from '../../http/authz'
import { Ok } from '../../http/schema'
import { SeriesPoint, timeBodyWith } from '../../query/model'
import { oneOf } from '../../util/typebox'
import { BUDGET_ACTIONS, type BudgetActionViews } from './actions'

const Body = timeBodyWith({})
const read = { catalogued: true as const }

/** The budget-action views (spec 4.6 `traffic.read`). */
export const budgetRoutes = (authz: Authz, actions: BudgetActionViews) =>
  new Elysia({ name: 'budget-routes' })
    .use(authz)
    .post(
      '/v1/budget/actions/breakdown',
      async ({ principal, body }) => ({ data: await actions.breakdown(principal, body), error: null }),
      {
        ...read,
        body: Body,
        response: Ok(
          t.Array(
            t.Object({
              action: oneOf(BUDGET_ACTIONS),
              scope: t.String(),
              count: t.Number(),
              amount: t.Number({ description: 'USD: the spend that set the actions off' }),
            }),
          ),
        ),
        detail: { summary: 'Budget actions (alert, block, downgrade, throttle) by budget scope' },
      },
    )
    .post(
      '/v1/budget/actions/over-time',
      async ({ principal, body }) => ({ data: await actions.overTime(principal, body), error: null }),
      {
        ...read,
        body: Body,
        response: Ok(t.Array(SeriesPoint({ values: t.Record(t.String(), t.Number()) }))),
        detail: { summary: 'Per time bucket, how many budget actions of each kind' },
      },
    )
