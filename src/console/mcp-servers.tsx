import { useEffect, useState } from 'preact/hooks'
import type { PlatformServerView, ProbeView, ServerView } from '../modules/mcp-servers/model'
import { A2aAgents, ToolRates } from './agents'
import { api } from './api'
import { EditAndDelete, EditableList, type FormDone, type ItemActions, ItemForm } from './editable-list'
import { formatMs } from './format'
import { ErrorNote, fieldValue, type PageProps, useAction } from './ui'

type McpServer = typeof ServerView.static
type Probe = typeof ProbeView.static
type PlatformServer = typeof PlatformServerView.static

const SERVERS_PATH = '/v1/mcp/servers'
const PLATFORM_PATH = '/v1/mcp/platform-servers'
const serverPath = (server: McpServer) => `${SERVERS_PATH}/${encodeURIComponent(server.id)}`

/**
 * The rest of the Governance page, below the access rules: the MCP servers the organisation registered
 * (by hand or from gw's catalogue) and what their tools cost, and its A2A agents. Everyone with org.read
 * sees them; governance.write changes them (the tool rates, spend_controls.write).
 */
export function McpServers({ can }: PageProps) {
  const canWrite = can('governance.write')
  // Each change of the servers (by their forms or by the catalogue's switches) is counted: the catalogue,
  // whose switches show the registrations, and the tool rates, which name servers, read theirs again.
  const [serverChanges, setServerChanges] = useState(0)
  return (
    <div class="governance">
      <section aria-labelledby="mcp-servers">
        <h2 id="mcp-servers">MCP servers</h2>
        <p class="muted">
          The MCP servers the organization registered: their tools are offered as <code>&lt;name&gt;__&lt;tool&gt;</code>, those
          the allow and deny globs let through.
        </p>
        <EditableList<McpServer>
          path={SERVERS_PATH}
          canWrite={canWrite}
          empty="No MCP servers registered."
          onChanged={() => setServerChanges((count) => count + 1)}
          show={(server, actions) => <ServerCard server={server} canWrite={canWrite} actions={actions} />}
          form={(server, done) => <ServerForm server={server} {...done} />}
        >
          {(refresh) => <PlatformCatalogue canWrite={canWrite} reads={serverChanges} onChanged={refresh} />}
        </EditableList>
      </section>
      <ToolRates canWrite={can('spend_controls.write')} serverChanges={serverChanges} />
      <A2aAgents canWrite={canWrite} />
    </div>
  )
}

/** `a*, b` as globs; empty parts are dropped. */
const globsOf = (text: string) =>
  text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)

const authText = (server: McpServer) => (server.auth.kind === 'bearer' ? `bearer token ${server.auth.hint ?? ''}`.trim() : 'none')

function ServerCard({ server, canWrite, actions }: { server: McpServer; canWrite: boolean; actions: ItemActions }) {
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
          <EditAndDelete name={server.name} actions={actions} />
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
function ServerForm({ server, ...done }: { server: McpServer | undefined } & FormDone) {
  const [auth, setAuth] = useState(server?.auth.kind === 'bearer' ? 'bearer' : 'none')
  const send = (form: HTMLFormElement) => {
    const data = new FormData(form)
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
    return server ? api('PATCH', serverPath(server), body) : api('POST', SERVERS_PATH, body)
  }
  return (
    <ItemForm
      name={server ? `Edit ${server.name}` : 'Register an MCP server'}
      kind="server"
      editing={server !== undefined}
      submit={server ? 'Save server' : 'Register server'}
      send={send}
      {...done}
    >
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
          <select value={auth} onChange={(event) => setAuth(fieldValue(event))}>
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
    </ItemForm>
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
          <input type="password" autoComplete="off" value={token} onInput={(event) => setToken(fieldValue(event))} />
        </label>
      )}
      <ErrorNote error={error} />
    </li>
  )
}
