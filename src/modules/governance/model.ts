import { RESOURCE_KINDS, SUBJECT_KINDS } from '../../governance/rules'
import { oneOf, t } from '../../util/typebox'

/** An organisation's rules are compiled and read on every governed call: a bound keeps that cheap. */
export const MAX_RULES = 1000
export const MAX_RESOURCE_ID = 200
export const MAX_REASON = 500
export const EFFECTS = ['allow', 'deny'] as const

// No control characters (C0, DEL, C1): ids and reasons go into error messages, logs and CSV exports.
const NO_CONTROLS = '^[^\\u0000-\\u001f\\u007f-\\u009f]*$'

const SubjectId = t.String({
  minLength: 1,
  maxLength: 200,
  pattern: NO_CONTROLS,
  error: 'subject.id must be the id of a team, a member (their user id), a role or an API key of this organization',
})

export const SubjectBody = t.Object(
  {
    kind: oneOf(SUBJECT_KINDS, { error: `subject.kind must be one of ${SUBJECT_KINDS.join(', ')}` }),
    id: t.Optional(SubjectId),
  },
  {
    additionalProperties: false,
    description:
      "Who the rule is about: the whole organization (org, no id), a team, a member (their user id), a role (owner, admin, member or a custom role's id) or an API key",
    error: 'subject must be {"kind": org|team|member|role|key, "id"?: ...}',
  },
)

export const ResourceBody = t.Object(
  {
    kind: oneOf(RESOURCE_KINDS, { error: `resource.kind must be one of ${RESOURCE_KINDS.join(', ')}` }),
    id: t.String({
      minLength: 1,
      maxLength: MAX_RESOURCE_ID,
      pattern: NO_CONTROLS,
      description:
        'A glob of the resource ids the rule covers, `*` standing for any run of characters (gpt-4o*, *); an MCP tool is `<server>__<tool>` (github__*)',
      error: `resource.id must be 1 to ${MAX_RESOURCE_ID} characters without control characters (* for any run of characters)`,
    }),
  },
  { additionalProperties: false, error: 'resource must be {"kind": provider|model|mcp_server|mcp_tool|agent, "id": ...}' },
)

const Effect = oneOf(EFFECTS, { error: 'effect must be allow or deny' })

const Reason = t.Nullable(
  t.String({
    maxLength: MAX_REASON,
    pattern: NO_CONTROLS,
    description: 'Why the rule is there: a refusal by it says so to the caller',
    error: `reason must be up to ${MAX_REASON} characters without control characters, or null`,
  }),
)

export const RuleBody = t.Object(
  { subject: SubjectBody, resource: ResourceBody, effect: Effect, reason: t.Optional(Reason) },
  { additionalProperties: false },
)
export type RuleInput = typeof RuleBody.static

/** A change: any of the fields of a rule, each replacing the rule's own whole; the result is checked as a new rule would be. */
export const RuleChangeBody = t.Object(
  {
    subject: t.Optional(SubjectBody),
    resource: t.Optional(ResourceBody),
    effect: t.Optional(Effect),
    reason: t.Optional(Reason),
  },
  { additionalProperties: false },
)
export type RuleChange = typeof RuleChangeBody.static

export const RuleParams = t.Object({ id: t.String({ minLength: 1, maxLength: 64 }) })

export const Rule = t.Object({
  id: t.String(),
  subject: t.Object({ kind: oneOf(SUBJECT_KINDS), id: t.Nullable(t.String({ description: 'null for the organization' })) }),
  resource: t.Object({ kind: oneOf(RESOURCE_KINDS), id: t.String() }),
  effect: oneOf(EFFECTS),
  reason: t.Nullable(t.String()),
  createdAt: t.String({ format: 'date-time' }),
  updatedAt: t.String({ format: 'date-time' }),
})

const defaultOf = (kind: string) =>
  oneOf(EFFECTS, { description: `what a ${kind} no rule matches gets`, error: `${kind} must be allow or deny` })

/** The defaults, one per resource kind; a kind not named is left as it is. */
export const DefaultsBody = t.Object(
  {
    provider: t.Optional(defaultOf('provider')),
    model: t.Optional(defaultOf('model')),
    mcp_server: t.Optional(defaultOf('mcp_server')),
    mcp_tool: t.Optional(defaultOf('mcp_tool')),
    agent: t.Optional(defaultOf('agent')),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    error: `the body must set at least one of ${RESOURCE_KINDS.join(', ')} to allow or deny, and nothing else`,
  },
)
export type DefaultsInput = typeof DefaultsBody.static

export const Defaults = t.Object(
  {
    provider: oneOf(EFFECTS),
    model: oneOf(EFFECTS),
    mcp_server: oneOf(EFFECTS),
    mcp_tool: oneOf(EFFECTS),
    agent: oneOf(EFFECTS),
  },
  { description: 'What each resource kind gets when no rule matches: allow unless the organization set deny' },
)

export const DryRunBody = t.Object(
  {
    subject: SubjectBody,
    resource: t.Object(
      {
        kind: oneOf(RESOURCE_KINDS, { error: `resource.kind must be one of ${RESOURCE_KINDS.join(', ')}` }),
        id: t.String({
          minLength: 1,
          maxLength: MAX_RESOURCE_ID,
          pattern: NO_CONTROLS,
          description: 'The resource as a call names it (gpt-4o-mini, openai, github__create_issue); a * in it is itself',
          error: `resource.id must be 1 to ${MAX_RESOURCE_ID} characters without control characters`,
        }),
      },
      { additionalProperties: false, error: 'resource must be {"kind": ..., "id": ...}' },
    ),
  },
  { additionalProperties: false },
)
export type DryRunInput = typeof DryRunBody.static

export const DryRun = t.Object({
  decision: oneOf(EFFECTS),
  matchedRuleId: t.Nullable(t.String({ description: "The rule that decided; null when the kind's default did" })),
  rulesEvaluated: t.Integer({ description: "The organization's rules on the resource's kind that were looked at" }),
  reason: t.Nullable(t.String({ description: "The deciding rule's reason, when it gave one" })),
})

export const Entitlement = t.Object({
  tier: t.String(),
  accessRules: t.Boolean(),
  mcpGateway: t.Boolean(),
  a2a: t.Boolean(),
  maxRules: t.Integer(),
  requiredTier: t.String({ description: 'The lowest tier governance is on: free, since a security control is not sold' }),
})
