import { Elysia, t } from 'elysia'
import { answer, answerCreated } from '../../http/answer'
import type { Authz } from '../../http/authz'
import { Created, Deleted, Ok } from '../../http/schema'
import type { BudgetActionViews } from './actions'
import {
  ActionsBody,
  ActionsBreakdown,
  ActionsOverTime,
  AlertConfig,
  AlertConfigBody,
  BreachBody,
  Breaches,
  BreachesQuery,
  BudgetSettings,
  CustomerBudgetBody,
  CustomerDeleteBody,
  CustomerQuery,
  DowngradeMapping,
  DowngradeMappingBody,
  Limit,
  LimitParams,
  LimitStatus,
  MappingParams,
  MemberBudgetBody,
  MemberParams,
  Notice,
  NotifyBody,
  Sent,
  Summary,
  VelocityLimitBody,
  WindowLimitBody,
  WindowSettings,
  WindowSettingsBody,
} from './model'
import type { BudgetsService } from './service'

const catalogued = { catalogued: true as const }

/** Spend controls (spec 4.6 `spend_controls.write`; the summary, customers and breaches `reports.read`) and the budget-action views (`traffic.read`). */
export const budgetRoutes = (authz: Authz, actions: BudgetActionViews, budgets: BudgetsService) =>
  new Elysia({ name: 'budget-routes' })
    .use(authz)
    .post('/v1/budget/actions/breakdown', ({ principal, body }) => answer(actions.breakdown(principal, body)), {
      ...catalogued,
      body: ActionsBody,
      response: Ok(ActionsBreakdown),
      detail: { summary: 'Budget actions (alert, block, downgrade, throttle) by budget scope' },
    })
    .post('/v1/budget/actions/over-time', ({ principal, body }) => answer(actions.overTime(principal, body)), {
      ...catalogued,
      body: ActionsBody,
      response: Ok(ActionsOverTime),
      detail: { summary: 'Per time bucket, how many budget actions of each kind' },
    })
    .put('/v1/budget/window-limit', ({ principal, body }) => answer(budgets.putWindowLimit(principal, body)), {
      ...catalogued,
      body: WindowLimitBody,
      response: Ok(Limit),
      detail: { summary: 'Create a limit over a calendar or fixed window, or change the one named by id' },
    })
    .delete(
      '/v1/budget/window-limit/:id',
      ({ principal, params }) => answer(budgets.removeLimit(principal, params.id, 'window')),
      {
        ...catalogued,
        params: LimitParams,
        response: Ok(Deleted),
        detail: { summary: 'Delete a window limit' },
      },
    )
    .put('/v1/budget/velocity-limit', ({ principal, body }) => answer(budgets.putVelocityLimit(principal, body)), {
      ...catalogued,
      body: VelocityLimitBody,
      response: Ok(Limit),
      detail: { summary: 'Create a sliding spend limit (USD per 10 to 3600 s), or change the one named by id' },
    })
    .delete(
      '/v1/budget/velocity-limit/:id',
      ({ principal, params }) => answer(budgets.removeLimit(principal, params.id, 'velocity')),
      {
        ...catalogued,
        params: LimitParams,
        response: Ok(Deleted),
        detail: { summary: 'Delete a velocity limit' },
      },
    )
    .put(
      '/v1/budget/member/:memberUserId',
      ({ principal, params, body }) => answer(budgets.putMemberBudget(principal, params.memberUserId, body)),
      {
        ...catalogued,
        params: MemberParams,
        body: MemberBudgetBody,
        response: Ok(Limit),
        detail: { summary: "Set a member's budget: the window limit on that member (USD per month unless told)" },
      },
    )
    .put('/v1/budget/customer', ({ principal, body }) => answer(budgets.putCustomerBudget(principal, body)), {
      ...catalogued,
      body: CustomerBudgetBody,
      response: Ok(Limit),
      detail: { summary: "Set a customer's budget: the window limit on a Gw-Customer-Id (USD per month unless told)" },
    })
    .delete(
      '/v1/budget/customer',
      ({ principal, query, body }) => answer(budgets.removeCustomerBudget(principal, query.customerId ?? body?.customerId)),
      {
        ...catalogued,
        query: CustomerQuery,
        body: CustomerDeleteBody,
        response: Ok(t.Object({ customerId: t.String(), deleted: t.Integer() })),
        detail: { summary: 'Delete every limit on a customer (?customerId= or a JSON body)' },
      },
    )
    .get('/v1/budget/customers', ({ principal }) => answer(budgets.customers(principal)), {
      ...catalogued,
      response: Ok(t.Array(t.Object({ customerId: t.Nullable(t.String()), ...LimitStatus.properties }))),
      detail: { summary: 'The limits on customers, with what each customer has spent in the window' },
    })
    .put('/v1/budget/window-settings', ({ principal, body }) => answer(budgets.putWindowSettings(principal, body)), {
      ...catalogued,
      body: WindowSettingsBody,
      response: Ok(WindowSettings),
      detail: { summary: 'The time zone, first weekday and first day of the month calendar windows follow' },
    })
    .put('/v1/budget/alert-config', ({ principal, body }) => answer(budgets.putAlertConfig(principal, body)), {
      ...catalogued,
      body: AlertConfigBody,
      response: Ok(AlertConfig),
      detail: { summary: 'At which percentages of each limit alerts go out, and on which channels' },
    })
    .delete('/v1/budget/alert-config', ({ principal }) => answer(budgets.removeAlertConfig(principal)), {
      ...catalogued,
      response: Ok(AlertConfig),
      detail: { summary: 'Back to the default: breaches only, to the webhooks that subscribe to them' },
    })
    .post('/v1/budget/downgrade-mappings', ({ principal, body }) => answerCreated(budgets.putDowngradeMapping(principal, body)), {
      ...catalogued,
      body: DowngradeMappingBody,
      response: Created(DowngradeMapping),
      detail: {
        summary: 'The model to serve instead when a downgrade limit is reached (replaces the mapping of the same fromModel)',
      },
    })
    .delete(
      '/v1/budget/downgrade-mappings/:mappingId',
      ({ principal, params }) => answer(budgets.removeDowngradeMapping(principal, params.mappingId)),
      {
        ...catalogued,
        params: MappingParams,
        response: Ok(Deleted),
        detail: { summary: 'Delete a downgrade mapping' },
      },
    )
    .post('/v1/budget/notify', ({ principal, body }) => answer(budgets.notify(principal, body)), {
      ...catalogued,
      body: NotifyBody,
      response: Ok(Sent),
      detail: { summary: 'Send a test or manual budget notice on the alert channels' },
    })
    .post('/v1/budget/breach', ({ principal, body }) => answerCreated(budgets.recordBreach(principal, body)), {
      ...catalogued,
      body: BreachBody,
      response: Created(Notice),
      detail: { summary: 'Record a breach by hand (logged with the automatic ones, sent as budget.breached)' },
    })
    .get('/v1/budget/breaches', ({ principal, query }) => answer(budgets.breaches(principal, query)), {
      ...catalogued,
      query: BreachesQuery,
      response: Ok(Breaches),
      detail: { summary: 'The breach log, newest first: automatic (refusals, limits reached) and manual' },
    })
    .get('/v1/budget/summary', ({ principal }) => answer(budgets.summary(principal)), {
      ...catalogued,
      response: Ok(Summary),
      detail: { summary: 'Every limit with its spent, held and remaining amounts and its window now' },
    })
    .get('/v1/budget/settings', ({ principal }) => answer(budgets.settings(principal)), {
      ...catalogued,
      response: Ok(BudgetSettings),
      detail: { summary: 'The calendar windows, the alert config and the downgrade mappings the limits follow' },
    })
