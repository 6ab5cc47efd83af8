import { Elysia, t } from 'elysia'
import { answer, answerCreated } from '../../http/answer'
import type { Authz } from '../../http/authz'
import { Created, Deleted, Ok } from '../../http/schema'
import { Rule, RuleBody, RuleParams } from './model'
import type { RateLimitRulesService } from './service'

/** Organisation rate-limit rules (spec 4.6 `spend_controls.write`); configuring them needs the Growth tier. */
export const rateLimitRoutes = (authz: Authz, rules: RateLimitRulesService) =>
  new Elysia({ name: 'rate-limit-routes' })
    .use(authz)
    .get('/v1/rate-limits', ({ principal }) => answer(rules.list(principal)), {
      authenticated: true,
      response: Ok(t.Array(Rule)),
      detail: { summary: "The organization's rate-limit rules" },
    })
    .post('/v1/rate-limits', ({ principal, body }) => answerCreated(rules.create(principal, body)), {
      catalogued: true,
      body: RuleBody,
      response: Created(Rule),
      detail: { summary: 'Create a rate-limit rule (Growth tier or higher)' },
    })
    .put('/v1/rate-limits/:ruleId', ({ principal, params, body }) => answer(rules.replace(principal, params.ruleId, body)), {
      catalogued: true,
      params: RuleParams,
      body: RuleBody,
      response: Ok(Rule),
      detail: { summary: 'Replace a rate-limit rule' },
    })
    .delete('/v1/rate-limits/:ruleId', ({ principal, params }) => answer(rules.remove(principal, params.ruleId)), {
      catalogued: true,
      params: RuleParams,
      response: Ok(Deleted),
      detail: { summary: 'Delete a rate-limit rule' },
    })
