import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { boundedText } from '../util/read-body'
import { VERSION } from '../version'
import { clientSdk } from './sdk'

/**
 * gw as an MCP client of a registered server, through the protocol's own SDK: the handshake
 * (initialize), the tool list, and what a server publishes about itself. Every request goes through
 * the `fetch` the caller hands in (the egress policy's guarded fetch), so the SDK reaches nothing the
 * operator has not allowed.
 */

export type McpTransport = 'streamable_http' | 'sse'
export type FetchLike = (input: string | URL, init?: RequestInit) => Promise<Response>

export interface McpTarget {
  url: string
  transport: McpTransport
  /** Sent as `Authorization: Bearer <token>` on every request when set. */
  token?: string
}

export interface ServerInfo {
  name: string
  version: string
  title?: string
}

export interface ProbeResult {
  ok: boolean
  protocolVersion: string | null
  serverInfo: ServerInfo | null
  tools: Array<{ name: string; description: string | null }>
  latencyMs: number
  error: string | null
}

export interface Discovery {
  transport: McpTransport
  /** Whether the server asked for credentials: it answered 401, or publishes a protected-resource document. */
  needsAuth: boolean
  protocolVersion: string | null
  serverInfo: ServerInfo | null
  capabilities: Record<string, unknown> | null
  /** The server's `/.well-known/oauth-protected-resource` document (RFC 9728), when it publishes one. */
  protectedResource: Record<string, unknown> | null
  error: string | null
}

export const PROBE_TIMEOUT_MS = 10_000
/** A tool may work for a while (a search, a build); longer than this and the caller is told it failed. */
export const TOOL_CALL_TIMEOUT_MS = 120_000
/** A server that pages its tools without end is cut off here. */
const MAX_TOOL_PAGES = 20
/** What an answer shows of an error: enough to act on, never a whole page a server sent back. */
const MAX_ERROR_CHARS = 500
const PROTECTED_RESOURCE_BYTES = 64 * 1024

const CLIENT_INFO = { name: 'gw', version: VERSION }

/** What the connection saw, beyond what the SDK reports: the HTTP statuses and a 401's challenge. */
interface Observed {
  statuses: number[]
  challenge: string | null
}

function wired(base: FetchLike, token: string | undefined, signal: AbortSignal, observed: Observed): FetchLike {
  return async (input, init) => {
    const headers = new Headers(init?.headers)
    if (token !== undefined) headers.set('authorization', `Bearer ${token}`)
    const response = await base(input, {
      ...init,
      headers,
      signal: init?.signal ? AbortSignal.any([init.signal, signal]) : signal,
    })
    observed.statuses.push(response.status)
    if (response.status === 401) observed.challenge = response.headers.get('www-authenticate')
    return response
  }
}

interface Session {
  client: Client
  protocolVersion: string | null
}

/** Connects and runs initialize; the caller closes the client. */
async function connect(target: McpTarget, fetch: FetchLike, signal: AbortSignal, timeoutMs: number): Promise<Session> {
  const url = new URL(target.url)
  const sdk = await clientSdk()
  const transport =
    target.transport === 'sse'
      ? new sdk.SSEClientTransport(url, { fetch })
      : new sdk.StreamableHTTPClientTransport(url, { fetch })
  const session: Session = { client: new sdk.Client(CLIENT_INFO, { capabilities: {} }), protocolVersion: null }
  // The SDK tells the transport which version was agreed and keeps it to itself otherwise.
  const agree = transport.setProtocolVersion.bind(transport)
  transport.setProtocolVersion = (version: string) => {
    session.protocolVersion = version
    agree(version)
  }
  try {
    await session.client.connect(transport, { signal, timeout: timeoutMs })
  } catch (error) {
    await session.client.close().catch(() => undefined)
    throw error
  }
  return session
}

const bounded = (text: string) => (text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS)}…` : text)

function describe(error: unknown, observed: Observed, signal: AbortSignal, timeoutMs: number): string {
  if (observed.statuses.includes(401))
    return 'the server answered 401 Unauthorized: it needs a bearer token, or refused the one given'
  if (signal.aborted) return `the server did not answer within ${timeoutMs / 1000} s`
  const message = error instanceof Error ? error.message : String(error)
  return bounded(message || 'the connection failed')
}

const infoOf = (client: Client): ServerInfo | null => {
  const info = client.getServerVersion()
  if (!info) return null
  return { name: info.name, version: info.version, ...(info.title ? { title: info.title } : {}) }
}

/** Rejects with the signal's reason when it fires: an SDK call that ignores its signal still ends in time. */
function within<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(signal.reason)
    if (signal.aborted) stop()
    signal.addEventListener('abort', stop, { once: true })
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop))
  })
}

/**
 * Connects, runs initialize and tools/list, and says how it went. A server that cannot be reached or
 * fails is `ok: false` with the reason: the probe itself worked.
 */
export async function probe(
  target: McpTarget,
  fetch: FetchLike,
  options: { timeoutMs?: number; now?: () => number } = {},
): Promise<ProbeResult> {
  const timeoutMs = options.timeoutMs ?? PROBE_TIMEOUT_MS
  const now = options.now ?? Date.now
  const started = now()
  const signal = AbortSignal.timeout(timeoutMs)
  const observed: Observed = { statuses: [], challenge: null }
  let session: Session | undefined
  try {
    session = await within(connect(target, wired(fetch, target.token, signal, observed), signal, timeoutMs), signal)
    const tools: ProbeResult['tools'] = []
    let cursor: string | undefined
    for (let page = 0; page < MAX_TOOL_PAGES; page++) {
      const listed = await within(
        session.client.listTools(cursor ? { cursor } : undefined, { signal, timeout: timeoutMs }),
        signal,
      )
      for (const tool of listed.tools) tools.push({ name: tool.name, description: tool.description ?? null })
      cursor = listed.nextCursor
      if (!cursor) break
    }
    return {
      ok: true,
      protocolVersion: session.protocolVersion,
      serverInfo: infoOf(session.client),
      tools,
      latencyMs: now() - started,
      error: null,
    }
  } catch (error) {
    return {
      ok: false,
      protocolVersion: session?.protocolVersion ?? null,
      serverInfo: session ? infoOf(session.client) : null,
      tools: [],
      latencyMs: now() - started,
      error: describe(error, observed, signal, timeoutMs),
    }
  } finally {
    await session?.client.close().catch(() => undefined)
  }
}

/** Statuses with which a server says it does not speak Streamable HTTP at this URL: an older server may speak SSE. */
const NOT_STREAMABLE = new Set([400, 404, 405])

/**
 * What a server publishes without credentials: its initialize answer (over Streamable HTTP, or the
 * older SSE transport when it does not speak that), and its protected-resource document. Nothing is sent
 * beyond the handshake.
 */
export async function discover(url: string, fetch: FetchLike, options: { timeoutMs?: number } = {}): Promise<Discovery> {
  const timeoutMs = options.timeoutMs ?? PROBE_TIMEOUT_MS
  const signal = AbortSignal.timeout(timeoutMs)
  const attempt = async (transport: McpTransport) => {
    const observed: Observed = { statuses: [], challenge: null }
    try {
      const session = await within(
        connect({ url, transport }, wired(fetch, undefined, signal, observed), signal, timeoutMs),
        signal,
      )
      const found = {
        protocolVersion: session.protocolVersion,
        serverInfo: infoOf(session.client),
        capabilities: (session.client.getServerCapabilities() as Record<string, unknown> | undefined) ?? null,
      }
      await session.client.close().catch(() => undefined)
      return { transport, observed, found, error: null }
    } catch (error) {
      return { transport, observed, found: null, error: describe(error, observed, signal, timeoutMs) }
    }
  }
  let result = await attempt('streamable_http')
  if (!result.found && !signal.aborted && result.observed.statuses.some((status) => NOT_STREAMABLE.has(status))) {
    const sse = await attempt('sse')
    if (sse.found) result = sse
  }
  const unauthorized = result.observed.statuses.includes(401)
  const protectedResource = await protectedResourceOf(url, result.observed.challenge, fetch, signal)
  return {
    transport: result.transport,
    needsAuth: unauthorized || protectedResource !== null,
    protocolVersion: result.found?.protocolVersion ?? null,
    serverInfo: result.found?.serverInfo ?? null,
    capabilities: result.found?.capabilities ?? null,
    protectedResource,
    error: result.found ? null : unauthorized ? null : result.error,
  }
}

/**
 * The server's protected-resource metadata (RFC 9728): where its 401 challenge points (on the same
 * origin only), else the well-known path for the URL's path, then the origin's.
 */
async function protectedResourceOf(
  url: string,
  challenge: string | null,
  fetch: FetchLike,
  signal: AbortSignal,
): Promise<Record<string, unknown> | null> {
  const base = new URL(url)
  const candidates: string[] = []
  const pointed = challenge ? /resource_metadata="([^"]+)"/.exec(challenge)?.[1] : undefined
  if (pointed) {
    try {
      const target = new URL(pointed, base)
      if (target.origin === base.origin) candidates.push(target.href)
    } catch {
      // A challenge that names no URL points nowhere.
    }
  }
  const path = base.pathname.replace(/\/$/, '')
  if (path) candidates.push(new URL(`/.well-known/oauth-protected-resource${path}`, base).href)
  candidates.push(new URL('/.well-known/oauth-protected-resource', base).href)
  for (const candidate of [...new Set(candidates)]) {
    if (signal.aborted) return null
    try {
      const response = await fetch(candidate, { headers: { accept: 'application/json' }, signal })
      if (response.status !== 200) {
        await response.body?.cancel()
        continue
      }
      const text = await boundedText(response, PROTECTED_RESOURCE_BYTES)
      if (text === undefined) continue
      const document: unknown = JSON.parse(text)
      if (typeof document === 'object' && document !== null && !Array.isArray(document))
        return document as Record<string, unknown>
    } catch {
      // Not published there, or not JSON: try the next place.
    }
  }
  return null
}

/** A valid registration name (the tool prefix) made from what a server calls itself, or from its host. */
export function derivedName(serverName: string | undefined, url: string): string {
  const clean = (text: string) =>
    text
      .toLowerCase()
      .replace(/[^a-z0-9_-]+/g, '-')
      .replace(/_{2,}/g, '_')
      .replace(/-{2,}/g, '-')
      .slice(0, 64)
      .replace(/^[-_]+|[-_]+$/g, '')
  const fromServer = serverName ? clean(serverName) : ''
  if (fromServer) return fromServer
  let host = ''
  try {
    host = new URL(url).hostname.replace(/^(www|mcp|api)\./, '')
  } catch {
    // Validated before; a name is still answered.
  }
  return clean(host) || 'mcp-server'
}

/** A tool as its server lists it, whole: what gw lists again under its own name. */
export type UpstreamTool = Awaited<ReturnType<Client['listTools']>>['tools'][number]
export type ToolResult = Awaited<ReturnType<Client['callTool']>>

/** Raised when a server cannot be reached or fails; the message says why in a caller's words. */
export class UpstreamError extends Error {}

/** Runs `work` in a session with the server (initialize first), ended however it goes. */
async function inSession<T>(
  target: McpTarget,
  fetch: FetchLike,
  timeoutMs: number,
  work: (client: Client, signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const signal = AbortSignal.timeout(timeoutMs)
  const observed: Observed = { statuses: [], challenge: null }
  let session: Session | undefined
  try {
    session = await within(connect(target, wired(fetch, target.token, signal, observed), signal, timeoutMs), signal)
    return await within(work(session.client, signal), signal)
  } catch (error) {
    throw new UpstreamError(describe(error, observed, signal, timeoutMs))
  } finally {
    await session?.client.close().catch(() => undefined)
  }
}

/** Every tool the server lists (its pages followed up to a bound); throws UpstreamError when it fails. */
export function listTools(target: McpTarget, fetch: FetchLike, options: { timeoutMs?: number } = {}): Promise<UpstreamTool[]> {
  const timeoutMs = options.timeoutMs ?? PROBE_TIMEOUT_MS
  return inSession(target, fetch, timeoutMs, async (client, signal) => {
    const tools: UpstreamTool[] = []
    let cursor: string | undefined
    for (let page = 0; page < MAX_TOOL_PAGES; page++) {
      const listed = await client.listTools(cursor ? { cursor } : undefined, { signal, timeout: timeoutMs })
      tools.push(...listed.tools)
      cursor = listed.nextCursor
      if (!cursor) break
    }
    return tools
  })
}

/** A tool's result as the server answered it (`isError` included); throws UpstreamError when the call itself fails. */
export function callTool(
  target: McpTarget,
  fetch: FetchLike,
  call: { name: string; arguments?: Record<string, unknown> },
  options: { timeoutMs?: number } = {},
): Promise<ToolResult> {
  const timeoutMs = options.timeoutMs ?? TOOL_CALL_TIMEOUT_MS
  return inSession(target, fetch, timeoutMs, (client, signal) =>
    client.callTool({ name: call.name, ...(call.arguments ? { arguments: call.arguments } : {}) }, undefined, {
      signal,
      timeout: timeoutMs,
    }),
  )
}
