import { Elysia } from 'elysia'
import type { Authz } from '../../http/authz'
import { RuleBody, RuleParams } from './model'
import type { RateLimitRulesService } from './service'

/** Organisation rate-limit rules (spec 4.6 `spend_controls.write`); configuring them needs the Growth tier. */
export const rateLimitRoutes = (authz: Authz, rules: RateLimitRulesService) =>
  new Elysia({ name: 'rate-limit-routes' })
    .use(authz)
    .get('/v1/rate-limits', async ({ principal }) => ({ data: await rules.list(principal), error: null }), {
      authenticated: true,
      detail: { summary: "The organization's rate-limit rules" },
    })
    .post(
      '/v1/rate-limits',
      async ({ principal, body, set }) => {
        set.status = 201
        return { data: await rules.create(principal, body), error: null }
      },
      {
        permission: 'spend_controls.write',
        body: RuleBody,
        detail: { summary: 'Create a rate-limit rule (Growth tier or higher)' },
      },
    )
    .put(
      '/v1/rate-limits/:ruleId',
      async ({ principal, params, body }) => ({
        data: await rules.replace(principal, params.ruleId, body),
        error: null,
      }),
      {
        permission: 'spend_controls.write',
        params: RuleParams,
        body: RuleBody,
        detail: { summary: 'Replace a rate-limit rule' },
      },
    )
    .delete(
      '/v1/rate-limits/:ruleId',
      async ({ principal, params }) => ({
        data: await rules.remove(principal, params.ruleId),
        error: null,
      }),
      { permission: 'spend_controls.write', params: RuleParams, detail: { summary: 'Delete a rate-limit rule' } },
    )
