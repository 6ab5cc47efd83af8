import type { ComponentChildren } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import type { A2aCalls as A2aPage, McpSummary, McpToolCalls } from '../modules/relayed-calls/model'
import { api } from './api'
import { formatCount, formatMs, formatUsd, formatWhen } from './format'
import { timeWindow, WindowBar, type WindowId } from './time-window'
import { ErrorNote } from './ui'

/** The figures of a window's calls, which both summaries answer; cost in USD. */
type Stats = Pick<typeof McpSummary.static, 'calls' | 'errors' | 'averageLatencyMs' | 'cost'>
type McpCall = (typeof McpToolCalls.static)['calls'][number]
type A2aCall = (typeof A2aPage.static)['calls'][number]

const timeOfDay = new Intl.DateTimeFormat(undefined, { timeStyle: 'medium' })
const dayAndTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'short', timeStyle: 'short' })

/** When a call was made, short enough for a narrow table: today's by the time alone, the whole moment on hover. */
function When({ iso }: { iso: string }) {
  const at = new Date(iso)
  const today = at.toDateString() === new Date().toDateString()
  return (
    <time dateTime={iso} title={formatWhen(iso)}>
      {today ? timeOfDay.format(at) : dayAndTime.format(at)}
    </time>
  )
}

/** The most recent calls shown of each kind. */
const RECENT = 50

/**
 * The calls gw relays besides model calls: MCP tool calls (through gw's own MCP server at /mcp) and
 * A2A agent calls (through the relay at /a2a/{agent}), each as a summary of the window and its most
 * recent calls.
 */
export function RelayedCalls() {
  const [windowId, setWindowId] = useState<WindowId>('24h')
  const [reads, setReads] = useState(0)
  return (
    <section class="traffic relayed" aria-labelledby="tool-calls">
      <h1 id="tool-calls">Tool calls</h1>
      <WindowBar value={windowId} onChange={setWindowId}>
        <button type="button" class="quiet" onClick={() => setReads((count) => count + 1)}>
          Refresh
        </button>
      </WindowBar>
      <McpCalls windowId={windowId} reads={reads} />
      <A2aCalls windowId={windowId} reads={reads} />
    </section>
  )
}

/**
 * A summary and a page of calls read together for a window (a time window alone: the request filter does
 * not reach these views); read again when the window or `reads` changes.
 */
function useCalls<C>(summaryPath: string, callsPath: string, windowId: WindowId, reads: number) {
  const [summary, setSummary] = useState<Stats>()
  const [calls, setCalls] = useState<C[]>()
  const [error, setError] = useState<string>()
  useEffect(() => {
    const body = timeWindow(windowId)
    setError(undefined)
    Promise.all([api<Stats>('POST', summaryPath, body), api<{ calls: C[] }>('POST', callsPath, { ...body, limit: RECENT })])
      .then(([stats, page]) => {
        setSummary(stats)
        setCalls(page.calls)
      })
      .catch((failure: Error) => setError(failure.message))
  }, [windowId, reads])
  return { summary, calls, error }
}

function SummaryLine({ label, summary }: { label: string; summary: Stats }) {
  return (
    <p class="summary" data-summary={label}>
      <strong>{formatCount(summary.calls)}</strong> {summary.calls === 1 ? 'call' : 'calls'},{' '}
      <strong>{formatCount(summary.errors)}</strong> {summary.errors === 1 ? 'error' : 'errors'}
      {/* No call, no average: left out rather than shown as a dash. */}
      {summary.averageLatencyMs !== null && (
        <>
          , average latency <strong>{formatMs(summary.averageLatencyMs)}</strong>
        </>
      )}
      {/* Agent calls are not priced: a cost of theirs would always read $0. */}
      {label === 'mcp' && (
        <>
          , cost <strong>{formatUsd(summary.cost)}</strong>
        </>
      )}
    </p>
  )
}

function Status({ call }: { call: McpCall | A2aCall }) {
  return (
    <td>
      <span class={`status ${call.status}`}>{call.status}</span>
      {call.error && <div class="muted call-error">{call.error}</div>}
    </td>
  )
}

function CallsSection({
  id,
  title,
  note,
  empty,
  label,
  state,
  children,
}: {
  id: string
  title: string
  note: ComponentChildren
  empty: ComponentChildren
  label: string
  state: { summary?: Stats; calls?: unknown[]; error?: string }
  children: ComponentChildren
}) {
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      <p class="muted">{note}</p>
      <ErrorNote error={state.error} />
      {!state.calls && !state.error && <p class="muted">Loading…</p>}
      {state.summary && <SummaryLine label={label} summary={state.summary} />}
      {state.calls && state.calls.length === 0 && <p class="muted empty">{empty}</p>}
      {state.calls && state.calls.length > 0 && children}
    </section>
  )
}

function McpCalls({ windowId, reads }: { windowId: WindowId; reads: number }) {
  const state = useCalls<McpCall>('/v1/mcp/summary', '/v1/mcp/tool-calls', windowId, reads)
  return (
    <CallsSection
      id="mcp-calls"
      title="MCP tool calls"
      label="mcp"
      state={state}
      note={
        <>
          Tools called through gw's MCP server at <code>/mcp</code>, newest first (the last {RECENT} of the window).
        </>
      }
      empty={
        <>
          No MCP tool calls in this window. They appear once an MCP client, connected to <code>/mcp</code> with a gw API key,
          calls a tool of a server registered on the Governance page.
        </>
      }
    >
      <table aria-label="MCP tool calls">
        <thead>
          <tr>
            <th>Time</th>
            <th>Server</th>
            <th>Tool</th>
            <th>Status</th>
            <th>Latency</th>
            <th>Cost</th>
          </tr>
        </thead>
        <tbody>
          {state.calls?.map((call) => (
            <tr key={call.id} data-call={call.id}>
              <td>
                <When iso={call.createdAt} />
              </td>
              <td>{call.serverName}</td>
              <td>
                <code>{call.toolName}</code>
              </td>
              <Status call={call} />
              <td>{formatMs(call.latencyMs)}</td>
              <td>{call.cost === null ? '-' : formatUsd(call.cost)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </CallsSection>
  )
}

function A2aCalls({ windowId, reads }: { windowId: WindowId; reads: number }) {
  const state = useCalls<A2aCall>('/v1/a2a/summary', '/v1/a2a/calls', windowId, reads)
  return (
    <CallsSection
      id="a2a-calls"
      title="A2A agent calls"
      label="a2a"
      state={state}
      note={
        <>
          Calls relayed to A2A agents at <code>/a2a/&lt;agent&gt;</code>, newest first (the last {RECENT} of the window).
        </>
      }
      empty={
        <>
          No A2A agent calls in this window. They appear once a caller sends a JSON-RPC call with a gw API key to an agent's relay
          address, shown with each agent on the Governance page.
        </>
      }
    >
      <table aria-label="A2A agent calls">
        <thead>
          <tr>
            <th>Time</th>
            <th>Agent</th>
            <th>Method</th>
            <th>Status</th>
            <th>Latency</th>
          </tr>
        </thead>
        <tbody>
          {state.calls?.map((call) => (
            <tr key={call.id} data-call={call.id}>
              <td>
                <When iso={call.createdAt} />
              </td>
              <td>{call.agentName}</td>
              <td>{call.skill ? <code>{call.skill}</code> : '-'}</td>
              <Status call={call} />
              <td>{formatMs(call.latencyMs)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </CallsSection>
  )
}
