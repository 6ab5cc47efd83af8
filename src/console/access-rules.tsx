import { useEffect, useState } from 'preact/hooks'
import type { Defaults as DefaultsView, DryRun as DryRunView, Rule as RuleView } from '../modules/governance/model'
import type { Team as TeamView } from '../modules/teams/model'
import { api } from './api'
import { EditAndDelete, EditableList, type FormDone, type ItemActions, ItemForm } from './editable-list'
import { formatCount, formatWhen } from './format'
import type { ApiKey } from './keys'
import { type Member, membersPath } from './members'
import { type Role, roleName, rolesPath } from './roles'
import { ErrorNote, fieldValue, type PageProps, useAction } from './ui'

type Rule = typeof RuleView.static
type Subject = Rule['subject']
type SubjectKind = Subject['kind']
type ResourceKind = Rule['resource']['kind']
type Effect = Rule['effect']
type Defaults = typeof DefaultsView.static
type DryRun = typeof DryRunView.static
type Team = typeof TeamView.static

const RULES_PATH = '/v1/governance/access-rules'
const DEFAULT_PATH = '/v1/governance/access-default'
const rulePath = (rule: Rule) => `${RULES_PATH}/${encodeURIComponent(rule.id)}`

const SUBJECT_NAMES: Record<SubjectKind, string> = {
  org: 'the organization',
  team: 'team',
  member: 'member',
  role: 'role',
  key: 'API key',
}
const RESOURCE_NAMES: Record<ResourceKind, string> = {
  provider: 'provider',
  model: 'model',
  mcp_server: 'MCP server',
  mcp_tool: 'MCP tool',
  agent: 'agent',
}
// Each kind once, in the order the choices are offered: the names above are written for every kind the model has.
const SUBJECT_KINDS = Object.keys(SUBJECT_NAMES) as SubjectKind[]
const RESOURCE_KINDS = Object.keys(RESOURCE_NAMES) as ResourceKind[]
const EFFECTS: readonly Effect[] = ['deny', 'allow']
const RESOURCE_HINTS: Record<ResourceKind, string> = {
  provider: 'openai',
  model: 'gpt-4o*',
  mcp_server: 'github',
  mcp_tool: 'github__*',
  agent: 'support-*',
}
const BUILT_IN_ROLES = ['owner', 'admin', 'member'] as const

/** The organisation's teams, members, roles and keys, to name a subject by; a list the reader may not read is left out. */
interface Names {
  teams?: Team[]
  members?: Member[]
  roles?: Role[]
  keys?: ApiKey[]
}

function useNames(orgId: string): Names {
  const [names, setNames] = useState<Names>({})
  useEffect(() => {
    const read = <T,>(path: string) => api<T[]>('GET', path).catch(() => undefined)
    Promise.all([
      read<Team>('/v1/team'),
      read<Member>(membersPath(orgId)),
      read<Role>(rolesPath(orgId)),
      read<ApiKey>('/v1/api-keys'),
    ]).then(([teams, members, roles, keys]) => setNames({ teams, members, roles, keys }))
  }, [orgId])
  return names
}

/** The choices of a subject's id for one kind: every team, member, role or key of the organisation the reader can list. */
function subjectChoices(kind: SubjectKind, names: Names): Array<{ id: string; name: string }> {
  switch (kind) {
    case 'org':
      return []
    case 'team':
      return (names.teams ?? []).map((team) => ({ id: team.id, name: team.name }))
    case 'member':
      return (names.members ?? []).map((member) => ({ id: member.userId, name: member.email }))
    case 'role':
      return [
        ...BUILT_IN_ROLES.map((id) => ({ id, name: roleName(id, names.roles) })),
        ...(names.roles ?? [])
          .filter((role) => !role.builtIn)
          .map((role) => ({ id: role.id, name: roleName(role.id, names.roles) })),
      ]
    case 'key':
      return (names.keys ?? []).map((key) => ({ id: key.id, name: `${key.name} (${key.prefix}…)` }))
  }
}

function subjectText(subject: Subject, names: Names): string {
  if (subject.kind === 'org' || subject.id === null) return SUBJECT_NAMES.org
  const id = subject.id
  const named =
    subject.kind === 'team'
      ? names.teams?.find((team) => team.id === id)?.name
      : subject.kind === 'member'
        ? names.members?.find((member) => member.userId === id)?.email
        : subject.kind === 'role'
          ? roleName(id, names.roles)
          : names.keys?.find((key) => key.id === id)?.name
  return `${SUBJECT_NAMES[subject.kind]} ${named ?? id}`
}

/** A rule as a sentence: "deny team Platform → model gpt-4o*". */
const ruleText = (rule: Rule, names: Names) =>
  `${rule.effect} ${subjectText(rule.subject, names)} → ${RESOURCE_NAMES[rule.resource.kind]} ${rule.resource.id}`

/**
 * Governance: who may use which provider, model, MCP server or tool and agent: the access rules, the
 * default of each kind, and a dry run. Everyone with org.read sees them; governance.write changes them.
 * The MCP servers and agents the rules name are registered below them (mcp-servers.tsx).
 */
export function AccessRules({ orgId, can }: PageProps) {
  const canWrite = can('governance.write')
  const names = useNames(orgId)
  const [matched, setMatched] = useState<string | null>()
  return (
    <section class="governance" aria-labelledby="governance">
      <h1 id="governance">Governance</h1>
      <p class="muted">
        Access rules say who may use which provider, model, MCP server, MCP tool or agent. Of the rules that match a call, a deny
        wins, then an allow, then the default of the resource's kind; their order never matters. A rule names its resources by a
        glob: <code>*</code> is any run of characters (<code>gpt-4o*</code>), and an MCP tool is{' '}
        <code>&lt;server&gt;__&lt;tool&gt;</code>.
      </p>
      <section aria-labelledby="access-rules">
        <h2 id="access-rules">Access rules</h2>
        <EditableList<Rule>
          path={RULES_PATH}
          canWrite={canWrite}
          listClass="rules"
          empty="No access rules: every kind follows its default."
          show={(rule, actions) => (
            <RuleRow rule={rule} names={names} canWrite={canWrite} matched={matched === rule.id} actions={actions} />
          )}
          form={(rule, done) =>
            rule ? (
              <li>
                <RuleForm rule={rule} names={names} {...done} />
              </li>
            ) : (
              <RuleForm rule={undefined} names={names} {...done} />
            )
          }
        />
      </section>
      <DefaultsSection canWrite={canWrite} />
      <DryRunBox names={names} onMatched={setMatched} />
    </section>
  )
}

function RuleRow({
  rule,
  names,
  canWrite,
  matched,
  actions,
}: {
  rule: Rule
  names: Names
  canWrite: boolean
  matched: boolean
  actions: ItemActions
}) {
  const text = ruleText(rule, names)
  return (
    <li class={`card rule ${rule.effect}${matched ? ' matched' : ''}`} aria-label={`Rule ${text}`} data-rule={rule.id}>
      <div class="rule-text">
        <span class={`effect ${rule.effect}`}>{rule.effect}</span> {subjectText(rule.subject, names)} →{' '}
        {RESOURCE_NAMES[rule.resource.kind]} <code>{rule.resource.id}</code>
        {matched && (
          <span class="badge" data-matched>
            decided the dry run
          </span>
        )}
      </div>
      {rule.reason && <p class="muted">{rule.reason}</p>}
      <p class="muted when">Changed {formatWhen(rule.updatedAt)}</p>
      {canWrite && (
        <div class="row-actions">
          <EditAndDelete name={`the rule ${text}`} actions={actions} />
        </div>
      )}
    </li>
  )
}

/** A subject's kind and, for all but the organisation, which one: picked from the organisation's own. */
function SubjectFields({
  subject,
  names,
  onChange,
}: {
  subject: { kind: SubjectKind; id: string }
  names: Names
  onChange(subject: { kind: SubjectKind; id: string }): void
}) {
  const choices = subjectChoices(subject.kind, names)
  // A rule's team or key deleted since (or one the reader cannot list) is still shown by its id.
  const unlisted = subject.id !== '' && !choices.some((choice) => choice.id === subject.id)
  return (
    <>
      <label class="choice">
        Who
        <select value={subject.kind} onChange={(event) => onChange({ kind: fieldValue(event) as SubjectKind, id: '' })}>
          {SUBJECT_KINDS.map((kind) => (
            <option key={kind} value={kind}>
              {kind === 'org' ? 'everyone' : `a ${SUBJECT_NAMES[kind]}`}
            </option>
          ))}
        </select>
      </label>
      {subject.kind !== 'org' && (
        <label class="choice">
          Which {SUBJECT_NAMES[subject.kind]}
          <select value={subject.id} onChange={(event) => onChange({ ...subject, id: fieldValue(event) })}>
            <option value="">pick a {SUBJECT_NAMES[subject.kind]}</option>
            {unlisted && <option value={subject.id}>{subject.id}</option>}
            {choices.map((choice) => (
              <option key={choice.id} value={choice.id}>
                {choice.name}
              </option>
            ))}
          </select>
        </label>
      )}
    </>
  )
}

function ResourceKindField({ kind, onChange }: { kind: ResourceKind; onChange(kind: ResourceKind): void }) {
  return (
    <label class="choice">
      Resource
      <select value={kind} onChange={(event) => onChange(fieldValue(event) as ResourceKind)}>
        {RESOURCE_KINDS.map((option) => (
          <option key={option} value={option}>
            {RESOURCE_NAMES[option]}
          </option>
        ))}
      </select>
    </label>
  )
}

/** The subject as the API takes it: no id for the organisation, and none when none was picked (the API says what is missing). */
const subjectBody = (subject: { kind: SubjectKind; id: string }) =>
  subject.kind === 'org' || subject.id === '' ? { kind: subject.kind } : { kind: subject.kind, id: subject.id }

/** A new rule, or a rule changed (sent whole); the API's refusal is shown in the form. */
function RuleForm({ rule, names, ...done }: { rule: Rule | undefined; names: Names } & FormDone) {
  const [effect, setEffect] = useState<Effect>(rule?.effect ?? 'deny')
  const [subject, setSubject] = useState({ kind: rule?.subject.kind ?? ('team' as SubjectKind), id: rule?.subject.id ?? '' })
  const [kind, setKind] = useState<ResourceKind>(rule?.resource.kind ?? 'model')
  const [resource, setResource] = useState(rule?.resource.id ?? '')
  const [reason, setReason] = useState(rule?.reason ?? '')
  const send = () => {
    const body = {
      subject: subjectBody(subject),
      resource: { kind, id: resource.trim() },
      effect,
      reason: reason.trim() === '' ? null : reason.trim(),
    }
    return rule ? api('PATCH', rulePath(rule), body) : api('POST', RULES_PATH, body)
  }
  return (
    <ItemForm
      name={rule ? `Edit the rule ${ruleText(rule, names)}` : 'New access rule'}
      legend={rule ? 'Edit the rule' : 'New access rule'}
      kind="rule"
      editing={rule !== undefined}
      submit={rule ? 'Save rule' : 'Add rule'}
      send={send}
      {...done}
    >
      <div class="fields">
        <label class="choice">
          Effect
          <select value={effect} onChange={(event) => setEffect(fieldValue(event) as Effect)}>
            {EFFECTS.map((option) => (
              <option key={option} value={option}>
                {option}
              </option>
            ))}
          </select>
        </label>
        <SubjectFields subject={subject} names={names} onChange={setSubject} />
        <ResourceKindField kind={kind} onChange={setKind} />
        <label class="glob">
          Which (a glob)
          <input
            required
            value={resource}
            placeholder={RESOURCE_HINTS[kind]}
            onInput={(event) => setResource(fieldValue(event))}
          />
        </label>
      </div>
      <label>
        Reason (optional; told to a caller the rule refuses)
        <input value={reason} onInput={(event) => setReason(fieldValue(event))} />
      </label>
    </ItemForm>
  )
}

/** What each resource kind gets when no rule matches: allow unless set to deny. */
function DefaultsSection({ canWrite }: { canWrite: boolean }) {
  const [saved, setSaved] = useState<Defaults>()
  const [draft, setDraft] = useState<Defaults>()
  const { error, run } = useAction()
  useEffect(() => {
    run(async () => {
      const defaults = await api<Defaults>('GET', DEFAULT_PATH)
      setSaved(defaults)
      setDraft(defaults)
    })
  }, [])
  const changed = saved && draft ? RESOURCE_KINDS.filter((kind) => saved[kind] !== draft[kind]) : []
  const submit = async (event: Event) => {
    event.preventDefault()
    if (!draft) return
    const body = Object.fromEntries(changed.map((kind) => [kind, draft[kind]]))
    await run(async () => {
      const defaults = await api<Defaults>('PUT', DEFAULT_PATH, body)
      setSaved(defaults)
      setDraft(defaults)
    })
  }
  return (
    <section aria-labelledby="access-defaults">
      <h2 id="access-defaults">Defaults</h2>
      <p class="muted">What a call gets when no rule matches it, per kind of resource.</p>
      {!saved && !error && <p class="muted">Loading…</p>}
      {saved && draft && !canWrite && (
        <dl class="facts defaults">
          {RESOURCE_KINDS.map((kind) => (
            <div key={kind}>
              <dt>{RESOURCE_NAMES[kind]}</dt>
              <dd data-default={kind}>{saved[kind]}</dd>
            </div>
          ))}
        </dl>
      )}
      {saved && draft && canWrite && (
        <form class="setting defaults" onSubmit={submit} aria-label="Defaults">
          <fieldset>
            <legend>When no rule matches</legend>
            <div class="fields">
              {RESOURCE_KINDS.map((kind) => (
                <label key={kind} class="choice">
                  {RESOURCE_NAMES[kind]}
                  <select
                    data-default={kind}
                    value={draft[kind]}
                    onChange={(event) => setDraft({ ...draft, [kind]: fieldValue(event) as Effect })}
                  >
                    <option value="allow">allow</option>
                    <option value="deny">deny</option>
                  </select>
                </label>
              ))}
            </div>
            <div class="actions">
              <button type="submit" disabled={changed.length === 0}>
                Save defaults
              </button>
            </div>
          </fieldset>
        </form>
      )}
      <ErrorNote error={error} />
    </section>
  )
}

/** Asks the gateway's own evaluator what the rules decide for a subject and a resource, and points at the rule that decided. */
function DryRunBox({ names, onMatched }: { names: Names; onMatched(ruleId: string | null | undefined): void }) {
  const [subject, setSubject] = useState<{ kind: SubjectKind; id: string }>({ kind: 'org', id: '' })
  const [kind, setKind] = useState<ResourceKind>('model')
  const [resource, setResource] = useState('')
  const [answer, setAnswer] = useState<DryRun>()
  const [rules, setRules] = useState<Rule[]>()
  const { error, run } = useAction()
  const submit = async (event: Event) => {
    event.preventDefault()
    setAnswer(undefined)
    onMatched(undefined)
    await run(async () => {
      const [result, current] = await Promise.all([
        api<DryRun>('POST', `${RULES_PATH}/audit`, { subject: subjectBody(subject), resource: { kind, id: resource.trim() } }),
        api<Rule[]>('GET', RULES_PATH),
      ])
      setRules(current)
      setAnswer(result)
      onMatched(result.matchedRuleId)
    })
  }
  const rule = answer?.matchedRuleId ? rules?.find((candidate) => candidate.id === answer.matchedRuleId) : undefined
  return (
    <section aria-labelledby="dry-run">
      <h2 id="dry-run">Dry run</h2>
      <p class="muted">
        What the rules decide for someone and a resource, as a call would be decided; an API key counts as its creator too, with
        their role and teams.
      </p>
      <form class="setting dry-run" onSubmit={submit} aria-label="Dry run">
        <fieldset>
          <legend>Would this be allowed?</legend>
          <div class="fields">
            <SubjectFields subject={subject} names={names} onChange={setSubject} />
            <ResourceKindField kind={kind} onChange={setKind} />
            <label class="glob">
              Name (as a call names it)
              <input required value={resource} placeholder="gpt-4o-mini" onInput={(event) => setResource(fieldValue(event))} />
            </label>
          </div>
          <ErrorNote error={error} />
          <div class="actions">
            <button type="submit">Check</button>
          </div>
        </fieldset>
      </form>
      {answer && (
        <div class={`card verdict ${answer.decision}`} role="status" data-decision={answer.decision}>
          <p>
            <strong class={`effect ${answer.decision}`}>{answer.decision}</strong>{' '}
            {answer.matchedRuleId
              ? `by the rule ${rule ? ruleText(rule, names) : answer.matchedRuleId}`
              : `by the default for ${RESOURCE_NAMES[kind]}s: no rule matched`}
          </p>
          {answer.reason && <p>Reason: {answer.reason}</p>}
          <p class="muted">
            {formatCount(answer.rulesEvaluated)} {answer.rulesEvaluated === 1 ? 'rule' : 'rules'} on {RESOURCE_NAMES[kind]}s
            looked at.
          </p>
        </div>
      )}
    </section>
  )
}
