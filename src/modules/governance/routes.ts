import { Elysia, t } from 'elysia'
import { answer, answerCreated } from '../../http/answer'
import type { Authz } from '../../http/authz'
import { Created, Deleted, Ok } from '../../http/schema'
import { Defaults, DefaultsBody, DryRun, DryRunBody, Entitlement, Rule, RuleBody, RuleChangeBody, RuleParams } from './model'
import type { GovernanceService } from './service'

/** Governance (spec 4.6 `governance.write`; the reads and the dry run `org.read`): access rules and their defaults. */
export const governanceRoutes = (authz: Authz, governance: GovernanceService) =>
  new Elysia({ name: 'governance-routes' })
    .use(authz)
    .get('/v1/governance/access-rules', ({ principal }) => answer(governance.list(principal)), {
      catalogued: true,
      response: Ok(t.Array(Rule)),
      detail: { summary: "The organization's access rules, in the order they were made" },
    })
    .post('/v1/governance/access-rules', ({ principal, body }) => answerCreated(governance.create(principal, body)), {
      catalogued: true,
      body: RuleBody,
      response: Created(Rule),
      detail: {
        summary:
          'Create an access rule: allow or deny a subject (org, team, member, role, key) a resource (provider, model, mcp_server, mcp_tool, agent; a glob)',
      },
    })
    .patch(
      '/v1/governance/access-rules/:id',
      ({ principal, params, body }) => answer(governance.update(principal, params.id, body)),
      {
        catalogued: true,
        params: RuleParams,
        body: RuleChangeBody,
        response: Ok(Rule),
        detail: { summary: 'Change an access rule: the fields given replace its own, and the result is checked whole' },
      },
    )
    .delete('/v1/governance/access-rules/:id', ({ principal, params }) => answer(governance.remove(principal, params.id)), {
      catalogued: true,
      params: RuleParams,
      response: Ok(Deleted),
      detail: { summary: 'Delete an access rule' },
    })
    .post('/v1/governance/access-rules/audit', ({ principal, body }) => answer(governance.dryRun(principal, body)), {
      catalogued: true,
      body: DryRunBody,
      response: Ok(DryRun),
      detail: {
        summary:
          "A dry run: what the rules decide for a subject (a key as its calls are seen: its creator's role and teams too) and a resource, by the gateway's own evaluator",
      },
    })
    .get('/v1/governance/access-default', ({ principal }) => answer(governance.defaults(principal)), {
      catalogued: true,
      response: Ok(Defaults),
      detail: { summary: 'What each resource kind gets when no rule matches' },
    })
    .put('/v1/governance/access-default', ({ principal, body }) => answer(governance.putDefaults(principal, body)), {
      catalogued: { auditTarget: 'organization' },
      body: DefaultsBody,
      response: Ok(Defaults),
      detail: { summary: 'Set the default of one or more resource kinds (allow or deny); answers all of them' },
    })
    .get('/v1/governance/entitlement', ({ principal }) => answer(governance.entitlement(principal)), {
      catalogued: true,
      response: Ok(Entitlement),
      detail: { summary: 'Whether governance is on for this organization: on every tier' },
    })
