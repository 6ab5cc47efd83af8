import { Elysia } from 'elysia'
import type { Authz } from '../../http/authz'
import { answer, Ok } from '../../http/schema'
import type { BudgetActionViews } from './actions'
import { ActionsBody, ActionsBreakdown, ActionsOverTime } from './model'

const read = { catalogued: true as const }

/** The budget-action views (spec 4.6 `traffic.read`). */
export const budgetRoutes = (authz: Authz, actions: BudgetActionViews) =>
  new Elysia({ name: 'budget-routes' })
    .use(authz)
    .post('/v1/budget/actions/breakdown', ({ principal, body }) => answer(actions.breakdown(principal, body)), {
      ...read,
      body: ActionsBody,
      response: Ok(ActionsBreakdown),
      detail: { summary: 'Budget actions (alert, block, downgrade, throttle) by budget scope' },
    })
    .post('/v1/budget/actions/over-time', ({ principal, body }) => answer(actions.overTime(principal, body)), {
      ...read,
      body: ActionsBody,
      response: Ok(ActionsOverTime),
      detail: { summary: 'Per time bucket, how many budget actions of each kind' },
    })
