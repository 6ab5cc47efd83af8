import { useEffect, useState } from 'preact/hooks'
import { api } from './api'
import { formatMs, formatUsdExact, formatWhen } from './format'
import { ErrorNote, useAction, useList } from './ui'

/** An A2A agent as the API shows it: its key only as whether there is one and a hint. */
interface Agent {
  id: string
  name: string
  url: string
  hasKey: boolean
  keyHint?: string
  card: Record<string, unknown> | null
  createdAt: string
  updatedAt: string
}

interface AgentProbe {
  ok: boolean
  card: Record<string, unknown> | null
  latencyMs: number
  error: string | null
}

interface Skill {
  id: string
  name: string
  description: string | null
}

interface Rate {
  id: string
  serverId: string
  tool: string
  usdPerCall: number
  createdAt: string
  updatedAt: string
}

interface ServerName {
  id: string
  name: string
}

const AGENTS_PATH = '/v1/a2a/agents'
const RATES_PATH = '/v1/tool-rates'
const agentPath = (agent: Agent) => `${AGENTS_PATH}/${encodeURIComponent(agent.id)}`
const ANY = '*'

const value = (event: Event) => (event.currentTarget as HTMLInputElement | HTMLSelectElement).value
const text = (field: unknown): string | null => (typeof field === 'string' && field.trim() !== '' ? field : null)

/** What a card says of itself, read defensively: a card is the agent's own JSON. */
function cardFacts(card: Record<string, unknown>) {
  const skills: Skill[] = Array.isArray(card.skills)
    ? card.skills
        .filter((skill): skill is Record<string, unknown> => typeof skill === 'object' && skill !== null)
        .map((skill, i) => ({
          id: text(skill.id) ?? String(i),
          name: text(skill.name) ?? text(skill.id) ?? `skill ${i + 1}`,
          description: text(skill.description),
        }))
    : []
  return { name: text(card.name), description: text(card.description), version: text(card.version), skills }
}

/** The address callers send their A2A calls to: gw's own, which relays them with the agent's key. */
const relayAddress = (agent: Agent) => `${location.origin}/a2a/${agent.id}`

/**
 * The organisation's A2A agents: registered by name and URL, given the key gw sends them, probed for
 * their card; callers reach each at gw's relay address. Everyone with org.read sees them; governance.write
 * changes them.
 */
export function A2aAgents({ canWrite }: { canWrite: boolean }) {
  const { items: agents, error, change } = useList<Agent>(AGENTS_PATH)
  const [editing, setEditing] = useState<string>()
  const [made, setMade] = useState(0)
  const refresh = () => change(async () => undefined)
  const remove = (agent: Agent) =>
    change(async () => {
      await api('DELETE', agentPath(agent))
      if (editing === agent.id) setEditing(undefined)
    })
  return (
    <section aria-labelledby="a2a-agents">
      <h2 id="a2a-agents">A2A agents</h2>
      <p class="muted">
        Agents the organization reaches over A2A. Callers send their JSON-RPC calls to gw's relay address with a gw API key; gw
        checks the access rules (an agent is named by its name), then forwards the call with the agent's own key.
      </p>
      <ErrorNote error={error} />
      {!agents && !error && <p class="muted">Loading…</p>}
      {agents && agents.length === 0 && (
        <p class="muted">No A2A agents registered{canWrite ? ': register one below by its name and URL.' : '.'}</p>
      )}
      {agents?.map((agent) =>
        editing === agent.id ? (
          <AgentForm
            key={agent.id}
            agent={agent}
            onSaved={() => {
              setEditing(undefined)
              refresh()
            }}
            onCancel={() => setEditing(undefined)}
          />
        ) : (
          <AgentCard
            key={agent.id}
            agent={agent}
            canWrite={canWrite}
            onChanged={refresh}
            onEdit={() => setEditing(agent.id)}
            onDelete={() => remove(agent)}
          />
        ),
      )}
      {canWrite && (
        <AgentForm
          key={`new-${made}`}
          onSaved={() => {
            setMade((count) => count + 1)
            refresh()
          }}
        />
      )}
    </section>
  )
}

function AgentCard({
  agent,
  canWrite,
  onChanged,
  onEdit,
  onDelete,
}: {
  agent: Agent
  canWrite: boolean
  onChanged(): void
  onEdit(): void
  onDelete(): void
}) {
  const [probe, setProbe] = useState<AgentProbe>()
  const [busy, setBusy] = useState(false)
  const [keying, setKeying] = useState(false)
  const probing = useAction()
  const runProbe = async () => {
    setProbe(undefined)
    setBusy(true)
    if (await probing.run(async () => setProbe(await api<AgentProbe>('POST', `${agentPath(agent)}/probe`)))) onChanged()
    setBusy(false)
  }
  const facts: Array<[string, string]> = [
    ['URL', agent.url],
    ['Key sent to the agent', agent.hasKey ? `set${agent.keyHint ? ` (${agent.keyHint})` : ''}` : 'none'],
    ['Changed', formatWhen(agent.updatedAt)],
  ]
  // The card the last good probe kept; a probe just made shows its own answer instead.
  const card = probe?.ok ? probe.card : agent.card
  return (
    <article class="card agent" aria-label={`A2A agent ${agent.name}`}>
      <h3>{agent.name}</h3>
      <dl class="facts">
        <div class="whole">
          <dt>Relay address (what callers use)</dt>
          <dd>
            <code data-relay>{relayAddress(agent)}</code>
          </dd>
        </div>
        {facts.map(([name, shown]) => (
          <div key={name} class={name === 'URL' ? 'whole' : undefined}>
            <dt>{name}</dt>
            <dd data-fact={name}>{shown}</dd>
          </div>
        ))}
      </dl>
      {canWrite && (
        <div class="row-actions">
          <button type="button" class="quiet" onClick={runProbe} disabled={busy} aria-label={`Probe ${agent.name}`}>
            {busy ? 'Probing…' : 'Probe'}
          </button>
          <button
            type="button"
            class="quiet"
            onClick={() => setKeying(!keying)}
            aria-expanded={keying}
            aria-label={`Set the key of ${agent.name}`}
          >
            {agent.hasKey ? 'Replace key' : 'Set key'}
          </button>
          <button type="button" class="quiet" onClick={onEdit} aria-label={`Edit ${agent.name}`}>
            Edit
          </button>
          <button type="button" class="danger" onClick={onDelete} aria-label={`Delete ${agent.name}`}>
            Delete
          </button>
        </div>
      )}
      {canWrite && keying && (
        <KeyForm
          agent={agent}
          onSaved={() => {
            setKeying(false)
            onChanged()
          }}
          onCancel={() => setKeying(false)}
        />
      )}
      <ErrorNote error={probing.error} />
      {probe && !probe.ok && (
        <div class="probe" role="alert" data-probe="failed">
          <p class="error">
            The probe found no valid agent card in {formatMs(probe.latencyMs)}: {probe.error ?? 'the agent failed'}
          </p>
        </div>
      )}
      {probe?.ok && (
        <p class="probe-note" role="status" data-probe="ok">
          Card fetched in {formatMs(probe.latencyMs)}.
        </p>
      )}
      {card ? <CardView agent={agent} card={card} /> : !probe && <p class="muted">No card yet: a probe fetches it.</p>}
    </article>
  )
}

function CardView({ agent, card }: { agent: Agent; card: Record<string, unknown> }) {
  const facts = cardFacts(card)
  return (
    <div class="probe agent-card" data-card>
      <p>
        <strong>{facts.name ?? agent.name}</strong>
        {facts.version && <span class="muted"> {facts.version}</span>}
        {facts.description && <span> · {facts.description}</span>}
      </p>
      {facts.skills.length === 0 ? (
        <p class="muted">The card lists no skills.</p>
      ) : (
        <>
          <p class="muted skills-title">{facts.skills.length === 1 ? 'Its skill:' : `Its ${facts.skills.length} skills:`}</p>
          <ul class="tools" aria-label={`Skills of ${agent.name}`}>
            {facts.skills.map((skill) => (
              <li key={skill.id}>
                <strong>{skill.name}</strong> <code>{skill.id}</code>
                {skill.description && <span class="muted"> · {skill.description}</span>}
              </li>
            ))}
          </ul>
        </>
      )}
    </div>
  )
}

/** The key gw sends the agent as a bearer token: typed, sent, and never shown again. */
function KeyForm({ agent, onSaved, onCancel }: { agent: Agent; onSaved(): void; onCancel(): void }) {
  const [key, setKey] = useState('')
  const { error, run } = useAction()
  const submit = async (event: Event) => {
    event.preventDefault()
    if (await run(() => api('PUT', `${agentPath(agent)}/keys`, { key: key.trim() }))) {
      setKey('')
      onSaved()
    }
  }
  return (
    <form class="setting key-form" onSubmit={submit} aria-label={`Key of ${agent.name}`}>
      <fieldset>
        <legend>The key gw sends to {agent.name}</legend>
        <label>
          Key (kept sealed; shown afterwards only by its hint)
          <input type="password" autoComplete="off" required value={key} onInput={(event) => setKey(value(event))} />
        </label>
        <ErrorNote error={error} />
        <div class="actions">
          <button type="submit">Save key</button>
          <button type="button" class="quiet" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </fieldset>
    </form>
  )
}

/** A new agent, or one renamed or moved (a new URL drops its card until the next probe). */
function AgentForm({ agent, onSaved, onCancel }: { agent?: Agent; onSaved(): void; onCancel?(): void }) {
  const { error, run } = useAction()
  const submit = async (event: Event) => {
    event.preventDefault()
    const data = new FormData(event.currentTarget as HTMLFormElement)
    const body = { name: String(data.get('name') ?? '').trim(), url: String(data.get('url') ?? '').trim() }
    if (await run(() => (agent ? api('PATCH', agentPath(agent), body) : api('POST', AGENTS_PATH, body)))) onSaved()
  }
  const name = agent ? `Edit ${agent.name}` : 'Register an A2A agent'
  return (
    <form class={agent ? 'setting card agent-form' : 'setting agent-form'} onSubmit={submit} aria-label={name}>
      <fieldset>
        <legend>{name}</legend>
        <div class="fields">
          <label>
            Name (what access rules name it by)
            <input name="name" required maxLength={64} placeholder="support-bot" defaultValue={agent?.name ?? ''} />
          </label>
          <label class="url">
            URL (its A2A endpoint)
            <input name="url" required type="url" placeholder="https://agent.example.com/a2a" defaultValue={agent?.url ?? ''} />
          </label>
        </div>
        <ErrorNote error={error} />
        <div class="actions">
          <button type="submit">{agent ? 'Save agent' : 'Register agent'}</button>
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

/** A rate's server by its name where the servers are listed, else by its id. */
const serverText = (serverId: string, servers: ServerName[] | undefined) =>
  serverId === ANY ? 'any server' : (servers?.find((server) => server.id === serverId)?.name ?? serverId)
const rateText = (rate: Rate, servers: ServerName[] | undefined) =>
  `${rate.tool === ANY ? 'every tool' : rate.tool} on ${serverText(rate.serverId, servers)}`

/**
 * What a call of an MCP tool through gw costs: per server and tool, either of them `*`; the most
 * specific rate prices a call, and a call no rate matches is free. Everyone with org.read sees them;
 * spend_controls.write changes them.
 */
export function ToolRates({ canWrite, serverChanges }: { canWrite: boolean; serverChanges: number }) {
  const { items: rates, error, change } = useList<Rate>(RATES_PATH)
  const [servers, setServers] = useState<ServerName[]>()
  useEffect(() => {
    api<ServerName[]>('GET', '/v1/mcp/servers')
      .then(setServers)
      .catch(() => undefined)
  }, [serverChanges])
  const [made, setMade] = useState(0)
  const remove = (rate: Rate) => change(() => api('DELETE', `${RATES_PATH}/${encodeURIComponent(rate.id)}`))
  return (
    <section aria-labelledby="tool-rates">
      <h2 id="tool-rates">Tool rates</h2>
      <p class="muted">
        What one call of an MCP tool through gw costs, counted against budgets and shown with each call. The most specific rate
        applies (a server's tool, then every tool of a server, then a tool on any server, then every tool); a call no rate matches
        is free.
      </p>
      <ErrorNote error={error} />
      {!rates && !error && <p class="muted">Loading…</p>}
      {rates && rates.length === 0 && <p class="muted">No tool rates: every MCP tool call is free.</p>}
      {rates && rates.length > 0 && (
        <table class="rates" aria-label="Tool rates">
          <thead>
            <tr>
              <th>Server</th>
              <th>Tool</th>
              <th>Per call</th>
              <th>Changed</th>
              {canWrite && <th>Actions</th>}
            </tr>
          </thead>
          <tbody>
            {rates.map((rate) => (
              <tr key={rate.id} data-rate={rate.id}>
                <td>{serverText(rate.serverId, servers)}</td>
                <td>{rate.tool === ANY ? 'every tool' : <code>{rate.tool}</code>}</td>
                <td>{formatUsdExact(rate.usdPerCall)}</td>
                <td>{formatWhen(rate.updatedAt)}</td>
                {canWrite && (
                  <td>
                    <button
                      type="button"
                      class="danger"
                      onClick={() => remove(rate)}
                      aria-label={`Delete the rate of ${rateText(rate, servers)}`}
                    >
                      Delete
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {canWrite && (
        <RateForm
          key={`new-${made}`}
          servers={servers ?? []}
          onSaved={() => {
            setMade((count) => count + 1)
            change(async () => undefined)
          }}
        />
      )}
    </section>
  )
}

/** Sets a rate; the same server and tool again reprices the rate there. */
function RateForm({ servers, onSaved }: { servers: ServerName[]; onSaved(): void }) {
  const [serverId, setServerId] = useState(ANY)
  const [tool, setTool] = useState('')
  const [usd, setUsd] = useState('')
  const { error, run } = useAction()
  const submit = async (event: Event) => {
    event.preventDefault()
    const body = { serverId, tool: tool.trim() === '' ? ANY : tool.trim(), usdPerCall: Number(usd) }
    if (await run(() => api('PUT', RATES_PATH, body))) onSaved()
  }
  return (
    <form class="setting rate-form" onSubmit={submit} aria-label="Set a tool rate">
      <fieldset>
        <legend>Set a tool rate</legend>
        <div class="fields">
          <label class="choice">
            Server
            <select value={serverId} onChange={(event) => setServerId(value(event))}>
              <option value={ANY}>any server</option>
              {servers.map((server) => (
                <option key={server.id} value={server.id}>
                  {server.name}
                </option>
              ))}
            </select>
          </label>
          <label>
            Tool (empty: every tool)
            <input value={tool} placeholder="search_issues" maxLength={200} onInput={(event) => setTool(value(event))} />
          </label>
          <label>
            USD per call
            <input
              required
              type="number"
              min="0"
              max="1000"
              step="any"
              inputMode="decimal"
              value={usd}
              placeholder="0.002"
              onInput={(event) => setUsd(value(event))}
            />
          </label>
        </div>
        <ErrorNote error={error} />
        <div class="actions">
          <button type="submit">Set rate</button>
        </div>
      </fieldset>
    </form>
  )
}
