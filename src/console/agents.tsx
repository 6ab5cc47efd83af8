import { useEffect, useState } from 'preact/hooks'
import type { AgentView, ProbeView } from '../modules/a2a-agents/model'
import type { ServerView } from '../modules/mcp-servers/model'
import type { Rate as RateView } from '../modules/tool-rates/model'
import { api } from './api'
import { EditAndDelete, EditableList, type FormDone, type ItemActions, ItemForm } from './editable-list'
import { formatMs, formatUsd, formatWhen } from './format'
import { ErrorNote, fieldValue, useAction, useList } from './ui'

/** An A2A agent as the API shows it: its key only as whether there is one and a hint. */
type Agent = typeof AgentView.static
type AgentProbe = typeof ProbeView.static
type Rate = typeof RateView.static
/** What a rate names its server by. */
type ServerName = Pick<typeof ServerView.static, 'id' | 'name'>

/** A skill as the card lists it; the card is the agent's own JSON, read defensively. */
interface Skill {
  id: string
  name: string
  description: string | null
}

const AGENTS_PATH = '/v1/a2a/agents'
const RATES_PATH = '/v1/tool-rates'
const agentPath = (agent: Agent) => `${AGENTS_PATH}/${encodeURIComponent(agent.id)}`
const ANY = '*'

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
  return (
    <section aria-labelledby="a2a-agents">
      <h2 id="a2a-agents">A2A agents</h2>
      <p class="muted">
        Agents the organization reaches over A2A. Callers send their JSON-RPC calls to gw's relay address with a gw API key; gw
        checks the access rules (an agent is named by its name), then forwards the call with the agent's own key.
      </p>
      <EditableList<Agent>
        path={AGENTS_PATH}
        canWrite={canWrite}
        empty={`No A2A agents registered${canWrite ? ': register one below by its name and URL.' : '.'}`}
        show={(agent, actions) => <AgentCard agent={agent} canWrite={canWrite} actions={actions} />}
        form={(agent, done) => <AgentForm agent={agent} {...done} />}
      />
    </section>
  )
}

function AgentCard({ agent, canWrite, actions }: { agent: Agent; canWrite: boolean; actions: ItemActions }) {
  const [probe, setProbe] = useState<AgentProbe>()
  const [busy, setBusy] = useState(false)
  const [keying, setKeying] = useState(false)
  const probing = useAction()
  const runProbe = async () => {
    setProbe(undefined)
    setBusy(true)
    if (await probing.run(async () => setProbe(await api<AgentProbe>('POST', `${agentPath(agent)}/probe`)))) actions.changed()
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
          <EditAndDelete name={agent.name} actions={actions} />
        </div>
      )}
      {canWrite && keying && (
        <KeyForm
          agent={agent}
          onSaved={() => {
            setKeying(false)
            actions.changed()
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
function KeyForm({ agent, ...done }: { agent: Agent } & FormDone) {
  const send = (form: HTMLFormElement) =>
    api('PUT', `${agentPath(agent)}/keys`, { key: String(new FormData(form).get('key') ?? '').trim() })
  return (
    <ItemForm
      name={`Key of ${agent.name}`}
      legend={`The key gw sends to ${agent.name}`}
      kind="key"
      editing={false}
      submit="Save key"
      send={send}
      {...done}
    >
      <label>
        Key (kept sealed; shown afterwards only by its hint)
        <input name="key" type="password" autoComplete="off" required />
      </label>
    </ItemForm>
  )
}

/** A new agent, or one renamed or moved (a new URL drops its card until the next probe). */
function AgentForm({ agent, ...done }: { agent: Agent | undefined } & FormDone) {
  const send = (form: HTMLFormElement) => {
    const data = new FormData(form)
    const body = { name: String(data.get('name') ?? '').trim(), url: String(data.get('url') ?? '').trim() }
    return agent ? api('PATCH', agentPath(agent), body) : api('POST', AGENTS_PATH, body)
  }
  return (
    <ItemForm
      name={agent ? `Edit ${agent.name}` : 'Register an A2A agent'}
      kind="agent"
      editing={agent !== undefined}
      submit={agent ? 'Save agent' : 'Register agent'}
      send={send}
      {...done}
    >
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
    </ItemForm>
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
                <td>{formatUsd(rate.usdPerCall, { exact: true })}</td>
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
            <select value={serverId} onChange={(event) => setServerId(fieldValue(event))}>
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
            <input value={tool} placeholder="search_issues" maxLength={200} onInput={(event) => setTool(fieldValue(event))} />
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
              onInput={(event) => setUsd(fieldValue(event))}
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
