import { useEffect, useState } from 'preact/hooks'
import { A2aAgents, ToolRates } from './agents'
import { api } from './api'
import { formatCount, formatMs, formatWhen } from './format'
import type { ApiKey } from './keys'
import { type Member, membersPath } from './members'
import { type Role, roleName, rolesPath } from './roles'
import { ErrorNote, type PageProps, useAction, useList } from './ui'

const SUBJECT_KINDS = ['org', 'team', 'member', 'role', 'key'] as const
const RESOURCE_KINDS = ['provider', 'model', 'mcp_server', 'mcp_tool', 'agent'] as const
const EFFECTS = ['deny', 'allow'] as const
type SubjectKind = (typeof SUBJECT_KINDS)[number]
type ResourceKind = (typeof RESOURCE_KINDS)[number]
type Effect = (typeof EFFECTS)[number]

interface Subject {
  kind: SubjectKind
  id: string | null
}

interface Rule {
  id: string
  subject: Subject
  resource: { kind: ResourceKind; id: string }
  effect: Effect
  reason: string | null
  createdAt: string
  updatedAt: string
}

type Defaults = Record<ResourceKind, Effect>

interface DryRun {
  decision: Effect
  matchedRuleId: string | null
  rulesEvaluated: number
  reason: string | null
}

interface Team {
  id: string
  name: string
}

interface McpServer {
  id: string
  name: string
  url: string
  transport: string
  auth: { kind: string; hint?: string }
  toolAllow: string[]
  toolDeny: string[]
  enabled: boolean
  platformServerId: string | null
  createdAt: string
  updatedAt: string
}

interface Probe {
  ok: boolean
  protocolVersion: string | null
  serverInfo: { name: string; version: string; title?: string } | null
  tools: Array<{ name: string; description: string | null }>
  latencyMs: number
  error: string | null
}

interface PlatformServer {
  id: string
  name: string
  url: string
  transport: string
  auth: string
  description: string
  docs: string
  registration: McpServer | null
}

const RULES_PATH = '/v1/governance/access-rules'
const DEFAULT_PATH = '/v1/governance/access-default'
const SERVERS_PATH = '/v1/mcp/servers'
const PLATFORM_PATH = '/v1/mcp/platform-servers'
const rulePath = (rule: Rule) => `${RULES_PATH}/${encodeURIComponent(rule.id)}`
const serverPath = (server: McpServer) => `${SERVERS_PATH}/${encodeURIComponent(server.id)}`

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
 * Governance: who may use which provider, model, MCP server or tool and agent (the access rules, the
 * default of each kind, a dry run), the MCP servers the organisation registered and what their tools
 * cost, and its A2A agents. Everyone with org.read sees them; governance.write changes them (the tool
 * rates, spend_controls.write).
 */
export function Governance({ orgId, can }: PageProps) {
  const canWrite = can('governance.write')
  const names = useNames(orgId)
  const [matched, setMatched] = useState<string | null>()
  // The tool rates name servers: a server registered, renamed or deleted above is read again there.
  const [serverChanges, setServerChanges] = useState(0)
  return (
    <section class="governance" aria-labelledby="governance">
      <h1 id="governance">Governance</h1>
      <p class="muted">
        Access rules say who may use which provider, model, MCP server, MCP tool or agent. Of the rules that match a call, a deny
        wins, then an allow, then the default of the resource's kind; their order never matters. A rule names its resources by a
        glob: <code>*</code> is any run of characters (<code>gpt-4o*</code>), and an MCP tool is{' '}
        <code>&lt;server&gt;__&lt;tool&gt;</code>.
      </p>
      <AccessRules canWrite={canWrite} names={names} matched={matched ?? undefined} />
      <DefaultsSection canWrite={canWrite} />
      <DryRunBox names={names} onMatched={setMatched} />
      <McpServers canWrite={canWrite} onChanged={() => setServerChanges((count) => count + 1)} />
      <ToolRates canWrite={can('spend_controls.write')} serverChanges={serverChanges} />
      <A2aAgents canWrite={canWrite} />
    </section>
  )
}

function AccessRules({ canWrite, names, matched }: { canWrite: boolean; names: Names; matched: string | undefined }) {
  const { items: rules, error, change } = useList<Rule>(RULES_PATH)
  const [editing, setEditing] = useState<string>()
  const [made, setMade] = useState(0)
  const refresh = () => change(async () => undefined)
  const remove = (rule: Rule) =>
    change(async () => {
      await api('DELETE', rulePath(rule))
      if (editing === rule.id) setEditing(undefined)
    })
  return (
    <section aria-labelledby="access-rules">
      <h2 id="access-rules">Access rules</h2>
      <ErrorNote error={error} />
      {!rules && !error && <p class="muted">Loading…</p>}
      {rules && rules.length === 0 && <p class="muted">No access rules: every kind follows its default.</p>}
      {rules && rules.length > 0 && (
        <ul class="rules">
          {rules.map((rule) =>
            editing === rule.id ? (
              <li key={rule.id}>
                <RuleForm
                  rule={rule}
                  names={names}
                  onSaved={() => {
                    setEditing(undefined)
                    refresh()
                  }}
                  onCancel={() => setEditing(undefined)}
                />
              </li>
            ) : (
              <RuleRow
                key={rule.id}
                rule={rule}
                names={names}
                canWrite={canWrite}
                matched={matched === rule.id}
                onEdit={() => setEditing(rule.id)}
                onDelete={() => remove(rule)}
              />
            ),
          )}
        </ul>
      )}
      {canWrite && (
        <RuleForm
          key={`new-${made}`}
          names={names}
          onSaved={() => {
            setMade((count) => count + 1)
            refresh()
          }}
        />
      )}
    </section>
  )
}

function RuleRow({
  rule,
  names,
  canWrite,
  matched,
  onEdit,
  onDelete,
}: {
  rule: Rule
  names: Names
  canWrite: boolean
  matched: boolean
  onEdit(): void
  onDelete(): void
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
          <button type="button" class="quiet" onClick={onEdit} aria-label={`Edit the rule ${text}`}>
            Edit
          </button>
          <button type="button" class="danger" onClick={onDelete} aria-label={`Delete the rule ${text}`}>
            Delete
          </button>
        </div>
      )}
    </li>
  )
}

const value = (event: Event) => (event.currentTarget as HTMLInputElement | HTMLSelectElement).value

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
        <select value={subject.kind} onChange={(event) => onChange({ kind: value(event) as SubjectKind, id: '' })}>
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
          <select value={subject.id} onChange={(event) => onChange({ ...subject, id: value(event) })}>
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
      <select value={kind} onChange={(event) => onChange(value(event) as ResourceKind)}>
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
function RuleForm({ rule, names, onSaved, onCancel }: { rule?: Rule; names: Names; onSaved(): void; onCancel?(): void }) {
  const [effect, setEffect] = useState<Effect>(rule?.effect ?? 'deny')
  const [subject, setSubject] = useState({ kind: rule?.subject.kind ?? ('team' as SubjectKind), id: rule?.subject.id ?? '' })
  const [kind, setKind] = useState<ResourceKind>(rule?.resource.kind ?? 'model')
  const [resource, setResource] = useState(rule?.resource.id ?? '')
  const [reason, setReason] = useState(rule?.reason ?? '')
  const { error, run } = useAction()
  const submit = async (event: Event) => {
    event.preventDefault()
    const body = {
      subject: subjectBody(subject),
      resource: { kind, id: resource.trim() },
      effect,
      reason: reason.trim() === '' ? null : reason.trim(),
    }
    if (await run(() => (rule ? api('PATCH', rulePath(rule), body) : api('POST', RULES_PATH, body)))) onSaved()
  }
  const name = rule ? `Edit the rule ${ruleText(rule, names)}` : 'New access rule'
  return (
    <form class={rule ? 'setting card rule-form' : 'setting rule-form'} onSubmit={submit} aria-label={name}>
      <fieldset>
        <legend>{rule ? 'Edit the rule' : 'New access rule'}</legend>
        <div class="fields">
          <label class="choice">
            Effect
            <select value={effect} onChange={(event) => setEffect(value(event) as Effect)}>
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
            <input required value={resource} placeholder={RESOURCE_HINTS[kind]} onInput={(event) => setResource(value(event))} />
          </label>
        </div>
        <label>
          Reason (optional; told to a caller the rule refuses)
          <input value={reason} onInput={(event) => setReason(value(event))} />
        </label>
        <ErrorNote error={error} />
        <div class="actions">
          <button type="submit">{rule ? 'Save rule' : 'Add rule'}</button>
          {onCancel && (
            <button type="button" class="quiet" onClick={onCancel}>
              Cancel
            </button>
          )}
        </div>
      </fieldset>
    </form>
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
                    onChange={(event) => setDraft({ ...draft, [kind]: value(event) as Effect })}
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
              <input required value={resource} placeholder="gpt-4o-mini" onInput={(event) => setResource(value(event))} />
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

/** `a*, b` as globs; empty parts are dropped. */
const globsOf = (text: string) =>
  text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)

function McpServers({ canWrite, onChanged }: { canWrite: boolean; onChanged(): void }) {
  const { items: servers, error, change } = useList<McpServer>(SERVERS_PATH)
  const [editing, setEditing] = useState<string>()
  const [made, setMade] = useState(0)
  // The catalogue's switches make and change registrations: each read of the servers reads it again.
  const [reads, setReads] = useState(0)
  const refresh = () =>
    change(async () => {
      setReads((count) => count + 1)
      onChanged()
    })
  const remove = (server: McpServer) =>
    change(async () => {
      await api('DELETE', serverPath(server))
      setReads((count) => count + 1)
      onChanged()
    })
  return (
    <section aria-labelledby="mcp-servers">
      <h2 id="mcp-servers">MCP servers</h2>
      <p class="muted">
        The MCP servers the organization registered: their tools are offered as <code>&lt;name&gt;__&lt;tool&gt;</code>, those the
        allow and deny globs let through.
      </p>
      <ErrorNote error={error} />
      {!servers && !error && <p class="muted">Loading…</p>}
      {servers && servers.length === 0 && <p class="muted">No MCP servers registered.</p>}
      {servers?.map((server) =>
        editing === server.id ? (
          <ServerForm
            key={server.id}
            server={server}
            onSaved={() => {
              setEditing(undefined)
              refresh()
            }}
            onCancel={() => setEditing(undefined)}
          />
        ) : (
          <ServerCard
            key={server.id}
            server={server}
            canWrite={canWrite}
            onEdit={() => setEditing(server.id)}
            onDelete={() => remove(server)}
          />
        ),
      )}
      {canWrite && (
        <ServerForm
          key={`new-${made}`}
          onSaved={() => {
            setMade((count) => count + 1)
            refresh()
          }}
        />
      )}
      <PlatformCatalogue canWrite={canWrite} reads={reads} onChanged={refresh} />
    </section>
  )
}

const authText = (server: McpServer) => (server.auth.kind === 'bearer' ? `bearer token ${server.auth.hint ?? ''}`.trim() : 'none')

function ServerCard({
  server,
  canWrite,
  onEdit,
  onDelete,
}: {
  server: McpServer
  canWrite: boolean
  onEdit(): void
  onDelete(): void
}) {
  const [probe, setProbe] = useState<Probe>()
  const probing = useAction()
  const [busy, setBusy] = useState(false)
  const runProbe = async () => {
    setProbe(undefined)
    setBusy(true)
    await probing.run(async () => setProbe(await api<Probe>('POST', `${serverPath(server)}/probe`)))
    setBusy(false)
  }
  const facts: Array<[string, string]> = [
    ['URL', server.url],
    ['Transport', server.transport === 'sse' ? 'HTTP+SSE (older)' : 'Streamable HTTP'],
    ['Authentication', authText(server)],
    ['Tools offered', server.toolAllow.length === 0 ? 'all' : server.toolAllow.join(', ')],
    ['Tools never offered', server.toolDeny.length === 0 ? 'none' : server.toolDeny.join(', ')],
    ['State', server.enabled ? 'enabled' : 'disabled'],
  ]
  if (server.platformServerId) facts.push(['From the catalogue', server.platformServerId])
  return (
    <article class="card server" aria-label={`MCP server ${server.name}`}>
      <h3>{server.name}</h3>
      <dl class="facts">
        {facts.map(([name, text]) => (
          // The URL is long: it has a row of its own rather than breaking in a narrow column.
          <div key={name} class={name === 'URL' ? 'whole' : undefined}>
            <dt>{name}</dt>
            <dd>{text}</dd>
          </div>
        ))}
      </dl>
      {canWrite && (
        <div class="row-actions">
          <button type="button" class="quiet" onClick={runProbe} disabled={busy} aria-label={`Probe ${server.name}`}>
            {busy ? 'Probing…' : 'Probe'}
          </button>
          <button type="button" class="quiet" onClick={onEdit} aria-label={`Edit ${server.name}`}>
            Edit
          </button>
          <button type="button" class="danger" onClick={onDelete} aria-label={`Delete ${server.name}`}>
            Delete
          </button>
        </div>
      )}
      <ErrorNote error={probing.error} />
      {probe && <ProbeResult server={server} probe={probe} />}
    </article>
  )
}

function ProbeResult({ server, probe }: { server: McpServer; probe: Probe }) {
  if (!probe.ok)
    return (
      <div class="probe" role="alert" data-probe="failed">
        <p class="error">
          The probe reached no answer in {formatMs(probe.latencyMs)}: {probe.error ?? 'the server failed'}
        </p>
      </div>
    )
  const info = probe.serverInfo
  return (
    <div class="probe" role="status" data-probe="ok">
      <p>
        Answered in {formatMs(probe.latencyMs)}
        {info && ` as ${info.title ?? info.name} ${info.version}`}
        {probe.protocolVersion && `, protocol ${probe.protocolVersion}`}:{' '}
        {probe.tools.length === 0 ? 'no tools.' : `${probe.tools.length === 1 ? 'one tool' : `${probe.tools.length} tools`}.`}
      </p>
      {probe.tools.length > 0 && (
        <ul class="tools" aria-label={`Tools of ${server.name}`}>
          {probe.tools.map((tool) => (
            <li key={tool.name}>
              <code>{tool.name}</code>
              {tool.description && <span class="muted"> · {tool.description}</span>}
            </li>
          ))}
        </ul>
      )}
    </div>
  )
}

/** A new registration, or one changed: what the API takes, with the token left as it is unless one is typed. */
function ServerForm({ server, onSaved, onCancel }: { server?: McpServer; onSaved(): void; onCancel?(): void }) {
  const [auth, setAuth] = useState(server?.auth.kind === 'bearer' ? 'bearer' : 'none')
  const { error, run } = useAction()
  const submit = async (event: Event) => {
    event.preventDefault()
    const data = new FormData(event.currentTarget as HTMLFormElement)
    const text = (name: string) => String(data.get(name) ?? '').trim()
    const token = text('token')
    // Editing a server that keeps its bearer token sends no auth: the API replaces auth whole.
    const keepToken = server?.auth.kind === 'bearer' && auth === 'bearer' && token === ''
    const body = {
      name: text('name'),
      url: text('url'),
      transport: text('transport'),
      ...(keepToken ? {} : { auth: auth === 'bearer' ? { kind: 'bearer', token } : { kind: 'none' } }),
      toolAllow: globsOf(text('toolAllow')),
      toolDeny: globsOf(text('toolDeny')),
      ...(server ? { enabled: data.get('enabled') !== null } : {}),
    }
    if (await run(() => (server ? api('PATCH', serverPath(server), body) : api('POST', SERVERS_PATH, body)))) onSaved()
  }
  const name = server ? `Edit ${server.name}` : 'Register an MCP server'
  return (
    <form class={server ? 'setting card server-form' : 'setting server-form'} onSubmit={submit} aria-label={name}>
      <fieldset>
        <legend>{name}</legend>
        <div class="fields">
          <label>
            Name (the tools' prefix)
            <input name="name" required maxLength={64} placeholder="github" defaultValue={server?.name ?? ''} />
          </label>
          <label class="url">
            URL
            <input name="url" required type="url" placeholder="https://mcp.example.com/mcp" defaultValue={server?.url ?? ''} />
          </label>
          <label class="choice">
            Transport
            <select name="transport" defaultValue={server?.transport ?? 'streamable_http'}>
              <option value="streamable_http">Streamable HTTP</option>
              <option value="sse">HTTP+SSE (older)</option>
            </select>
          </label>
          <label class="choice">
            Authentication
            <select value={auth} onChange={(event) => setAuth(value(event))}>
              <option value="none">none</option>
              <option value="bearer">bearer token</option>
            </select>
          </label>
          {auth === 'bearer' && (
            <label>
              {server?.auth.kind === 'bearer' ? 'Token (empty: keep the one saved)' : 'Token'}
              <input name="token" type="password" autoComplete="off" required={server?.auth.kind !== 'bearer'} />
            </label>
          )}
        </div>
        <label>
          Tools offered (comma-separated globs; empty: all)
          <input name="toolAllow" placeholder="search_*, get_*" defaultValue={server?.toolAllow.join(', ') ?? ''} />
        </label>
        <label>
          Tools never offered (comma-separated globs; a deny wins)
          <input name="toolDeny" placeholder="delete_*" defaultValue={server?.toolDeny.join(', ') ?? ''} />
        </label>
        {server && (
          <label class="check">
            <input type="checkbox" name="enabled" defaultChecked={server.enabled} /> enabled
          </label>
        )}
        <ErrorNote error={error} />
        <div class="actions">
          <button type="submit">{server ? 'Save server' : 'Register server'}</button>
          {onCancel && (
            <button type="button" class="quiet" onClick={onCancel}>
              Cancel
            </button>
          )}
        </div>
      </fieldset>
    </form>
  )
}

/** gw's catalogue of well-known MCP servers, each switched on (registered from the catalogue) or off (kept, disabled). */
function PlatformCatalogue({ canWrite, reads, onChanged }: { canWrite: boolean; reads: number; onChanged(): void }) {
  const [entries, setEntries] = useState<PlatformServer[]>()
  const { error, run } = useAction()
  useEffect(() => {
    run(async () => setEntries(await api<PlatformServer[]>('GET', PLATFORM_PATH)))
  }, [reads])
  return (
    <section aria-labelledby="mcp-catalogue">
      <h3 id="mcp-catalogue">Catalogue</h3>
      <p class="muted">Well-known MCP servers gw knows of; switching one on registers it under its id.</p>
      <ErrorNote error={error} />
      {!entries && !error && <p class="muted">Loading…</p>}
      {entries && (
        <ul class="catalogue">
          {entries.map((entry) => (
            <CatalogueEntry key={entry.id} entry={entry} canWrite={canWrite} onChanged={onChanged} />
          ))}
        </ul>
      )}
    </section>
  )
}

function CatalogueEntry({ entry, canWrite, onChanged }: { entry: PlatformServer; canWrite: boolean; onChanged(): void }) {
  const [token, setToken] = useState('')
  const { error, run } = useAction()
  const enabled = entry.registration?.enabled ?? false
  // The switch shows what was asked for until the catalogue, read again, says it is so (or the API refused).
  const [asked, setAsked] = useState<boolean>()
  useEffect(() => setAsked(undefined), [enabled])
  // A token is asked for where the entry needs one and none is kept yet.
  const needsToken = entry.auth === 'bearer' && entry.registration?.auth.kind !== 'bearer'
  const toggle = async () => {
    setAsked(!enabled)
    const body = { enabled: !enabled, ...(!enabled && token.trim() ? { auth: { kind: 'bearer', token: token.trim() } } : {}) }
    if (await run(() => api('PUT', `${PLATFORM_PATH}/${encodeURIComponent(entry.id)}`, body))) {
      setToken('')
      onChanged()
    } else setAsked(undefined)
  }
  const shown = asked ?? enabled
  return (
    <li class="card entry">
      <div class="entry-head">
        <label class="check switch">
          <input
            type="checkbox"
            role="switch"
            aria-checked={shown}
            checked={shown}
            disabled={!canWrite}
            onChange={toggle}
            aria-label={`${entry.name} enabled`}
          />
          <strong>{entry.name}</strong>
        </label>
        <span class="muted">{shown === enabled ? (enabled ? 'on' : 'off') : 'switching…'}</span>
      </div>
      <p>{entry.description}</p>
      <p class="muted url">
        {entry.url} ·{' '}
        <a href={entry.docs} target="_blank" rel="noreferrer">
          documentation
        </a>
      </p>
      {canWrite && needsToken && !enabled && (
        <label>
          Token for {entry.name} (needed to switch it on)
          <input type="password" autoComplete="off" value={token} onInput={(event) => setToken(value(event))} />
        </label>
      )}
      <ErrorNote error={error} />
    </li>
  )
}
