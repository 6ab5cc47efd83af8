import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { Authenticator } from '../auth/authenticator'
import type { Principal } from '../auth/principal'
import { requireGatewayScope } from '../auth/scopes'
import { sealContexts, type Vault } from '../auth/vault'
import { ApiError, callerFacing, internalError } from '../errors'
import { type AccessPolicies, accessDenied } from '../governance/policies'
import type { Resource } from '../governance/rules'
import type { RateLimiter } from '../limits/limiter'
import type { Logger } from '../log'
import type { Tracing } from '../observability/tracing'
import type { BudgetEnforcer, Hold } from '../spend/enforcer'
import { MCP_PROVIDER } from '../store/repositories/calls'
import type { McpServerRow } from '../store/repositories/mcp-servers'
import type { Clock, Store } from '../store/store'
import { globMatches } from '../util/glob'
import { readBody } from '../util/read-body'
import { TtlCache } from '../util/ttl-cache'
import { VERSION } from '../version'
import { callTool, type FetchLike, listTools, type McpTarget, type ToolResult, UpstreamError, type UpstreamTool } from './client'
import { serverSdk } from './sdk'

type ServerSdk = Awaited<ReturnType<typeof serverSdk>>

/** Between a server's name and its tool's in the names gw lists; a server's name cannot hold it. */
export const SEPARATOR = '__'
/** A server's tool list is asked again after this long; a change of the registration asks at once. */
export const TOOL_LIST_TTL_MS = 30_000
const CACHED_TOOL_LISTS = 10_000
const NANO_PER_CENT = 10_000_000
/** A server name (64), the separator and a tool name as long as a rate may name (200), with room. */
const MAX_TOOL_NAME_CHARS = 300
/** A JSON-RPC message to gw is a tool call's arguments at most: far below a model call's body. */
export const MAX_MCP_BODY_BYTES = 4 * 1024 * 1024
const decoder = new TextDecoder()
/** What the log keeps of an upstream's error. */
const MAX_LOGGED_ERROR_CHARS = 500

/** JSON-RPC's own error codes (the SDK's `ErrorCode`, which is loaded only with the SDK). */
const JSON_RPC = { parseError: -32700, invalidRequest: -32600, invalidParams: -32602, internalError: -32603 } as const

/**
 * JSON-RPC error codes of gw's own refusals (the implementation-defined range): `data.code` carries
 * gw's error code (`access_denied`, `rate_limited`, `budget_exceeded`, ...), as the management API
 * names it, and `data.retryAfterSeconds` when waiting helps.
 */
export const MCP_ERRORS = {
  /** The code the SDK's own transport answers a method it does not serve with. */
  methodNotAllowed: -32000,
  unauthorized: -32001,
  refused: -32003,
  limited: -32029,
} as const

export interface McpGatewayDeps {
  store: Store
  authenticator: Pick<Authenticator, 'authenticate'>
  access: Pick<AccessPolicies, 'refusal'>
  limiter: Pick<RateLimiter, 'check' | 'charge'>
  budgets: Pick<BudgetEnforcer, 'reserve' | 'settle'>
  vault: Pick<Vault, 'open'>
  /** The egress policy's guarded fetch: every upstream connection is held to it. */
  fetch: FetchLike
  log: Logger
  /** A span for each tool call (OpenTelemetry); absent when tracing is off. */
  tracing?: Pick<Tracing, 'tool'>
  now?: Clock
  listTimeoutMs?: number
  callTimeoutMs?: number
}

/** A server's tool by the server's globs: a deny glob wins; with no allow glob every other tool is offered. */
export function offered(server: Pick<McpServerRow, 'toolAllow' | 'toolDeny'>, tool: string): boolean {
  if (server.toolDeny.some((glob) => globMatches(glob, tool))) return false
  return server.toolAllow.length === 0 || server.toolAllow.some((glob) => globMatches(glob, tool))
}

/** What the access rules are asked about a tool: its server by name, and the tool by its namespaced name. */
const resourcesOf = (server: Pick<McpServerRow, 'name'>, tool: string): Resource[] => [
  { kind: 'mcp_server', id: server.name },
  { kind: 'mcp_tool', id: `${server.name}${SEPARATOR}${tool}` },
]

const rpcFailure = (status: number, code: number, message: string, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  })

/** A tool call gw refuses, as a JSON-RPC error; answered as the SDK's McpError (see `guarded`). */
class ToolRefusal extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(message)
  }
}

const refused = (error: ApiError) =>
  new ToolRefusal(
    error.code === 'rate_limited' || error.code === 'budget_exceeded' ? MCP_ERRORS.limited : MCP_ERRORS.refused,
    error.message,
    { code: error.code, ...(error.retryAfterSeconds !== undefined ? { retryAfterSeconds: error.retryAfterSeconds } : {}) },
  )

const unknownTool = (name: string, why: string) =>
  new ToolRefusal(JSON_RPC.invalidParams, `unknown tool ${JSON.stringify(name)}: ${why}`, { code: 'unknown_tool' })

/**
 * gw as an MCP server (Streamable HTTP, stateless): one endpoint that lists the tools of an
 * organisation's enabled MCP servers under `<server>__<tool>`, and relays their calls, each held to
 * the server's globs, the access rules, the global rate limit and the budgets, priced by the tool
 * rates and written to the tool-call log. Callers authenticate as gateway calls do.
 */
export class McpGateway {
  private readonly toolLists: TtlCache<string, Promise<UpstreamTool[]>>
  private readonly now: Clock

  constructor(private readonly deps: McpGatewayDeps) {
    this.now = deps.now ?? Date.now
    this.toolLists = new TtlCache(CACHED_TOOL_LISTS, TOOL_LIST_TTL_MS, this.now)
  }

  /** The HTTP entry: POST carries JSON-RPC; GET and DELETE are 405, as a server without sessions answers them. */
  async handle(request: Request): Promise<Response> {
    let principal: Principal
    try {
      principal = await this.deps.authenticator.authenticate(request.headers)
      requireGatewayScope(principal)
    } catch (error) {
      const known = callerFacing(error)
      if (!known) {
        this.deps.log.error('mcp: authentication failed', { error: String(error) })
        return rpcFailure(500, JSON_RPC.internalError, internalError().message)
      }
      const code = known.status === 401 ? MCP_ERRORS.unauthorized : MCP_ERRORS.refused
      return rpcFailure(known.status, code, known.message, known.status === 401 ? { 'www-authenticate': 'Bearer' } : {})
    }
    if (request.method !== 'POST') {
      // Without sessions there is no stream of server-initiated messages to open, and none to end.
      return rpcFailure(405, MCP_ERRORS.methodNotAllowed, "gw's MCP endpoint is stateless: send JSON-RPC messages by POST", {
        allow: 'POST',
      })
    }
    let body: unknown
    try {
      body = JSON.parse(decoder.decode(await readBody(request, MAX_MCP_BODY_BYTES)))
    } catch (error) {
      if (error instanceof ApiError) return rpcFailure(error.status, JSON_RPC.invalidRequest, error.message)
      return rpcFailure(400, JSON_RPC.parseError, 'the body is not JSON: send a JSON-RPC message')
    }
    // A server and a transport per request: the SDK's stateless mode, where nothing outlives the answer.
    const sdk = await serverSdk()
    const server = this.serverFor(sdk, principal, request.headers)
    const transport = new sdk.WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    })
    await server.connect(transport)
    try {
      return await transport.handleRequest(request, { parsedBody: body })
    } finally {
      void server.close().catch(() => undefined)
    }
  }

  private serverFor(sdk: ServerSdk, principal: Principal, callerHeaders: Headers): Server {
    const server = new sdk.Server({ name: 'gw', version: VERSION }, { capabilities: { tools: {} } })
    server.setRequestHandler(sdk.ListToolsRequestSchema, () => this.guarded(sdk, () => this.list(principal)))
    server.setRequestHandler(sdk.CallToolRequestSchema, (request) =>
      this.guarded(sdk, () => this.call(principal, request.params.name, request.params.arguments, callerHeaders)),
    )
    return server
  }

  /**
   * What reaches the SDK: gw's refusals as its McpError; our own faults logged and answered as an
   * internal error, nothing of them reaching the caller.
   */
  private async guarded<T>(sdk: ServerSdk, work: () => Promise<T>): Promise<T> {
    try {
      return await work()
    } catch (error) {
      const known = error instanceof ToolRefusal ? undefined : callerFacing(error)
      const refusal = known ? refused(known) : error
      if (refusal instanceof ToolRefusal) throw new sdk.McpError(refusal.code, refusal.message, refusal.data)
      this.deps.log.error('mcp: request failed', {
        error: error instanceof Error ? (error.stack ?? error.message) : String(error),
      })
      throw new sdk.McpError(JSON_RPC.internalError, internalError().message)
    }
  }

  /** The tools of the organisation's enabled servers the caller may use; a server that fails is left out. */
  async list(principal: Principal): Promise<{ tools: UpstreamTool[] }> {
    const servers = (await this.deps.store.org(principal.orgId).mcpServers.list()).filter((server) => server.enabled)
    const lists = await Promise.all(
      servers.map(async (server) => {
        try {
          return { server, tools: await this.toolsOf(server) }
        } catch (error) {
          this.deps.log.warn('mcp: a server could not list its tools; left out of the list', {
            orgId: principal.orgId,
            serverId: server.id,
            error: error instanceof Error ? error.message : String(error),
          })
          return { server, tools: [] }
        }
      }),
    )
    const tools: UpstreamTool[] = []
    for (const { server, tools: upstream } of lists) {
      for (const tool of upstream) {
        if (!offered(server, tool.name)) continue
        if (await this.deps.access.refusal(principal, resourcesOf(server, tool.name))) continue
        tools.push({ ...tool, name: `${server.name}${SEPARATOR}${tool.name}` })
      }
    }
    return { tools }
  }

  /**
   * A call of `<server>__<tool>`: refused before the upstream is reached when the tool is unknown, not
   * offered, denied, over the rate limit or over a budget; otherwise relayed, priced by the tool rate
   * (charged when it succeeds) and written to the tool-call log.
   */
  async call(
    principal: Principal,
    name: string,
    args: Record<string, unknown> | undefined,
    callerHeaders: Headers = new Headers(),
  ): Promise<ToolResult> {
    // Postgres cannot hold NUL, nor a lone surrogate: such a name reaches neither the store nor the log.
    if (name.length > MAX_TOOL_NAME_CHARS || name.includes('\u0000') || !name.isWellFormed())
      throw unknownTool(name.slice(0, MAX_TOOL_NAME_CHARS), 'a tool name is at most 300 characters of text without NUL')
    const at = name.indexOf(SEPARATOR)
    if (at <= 0 || at + SEPARATOR.length >= name.length)
      throw unknownTool(name, `gw's tools are named <server>${SEPARATOR}<tool>`)
    const serverName = name.slice(0, at)
    const tool = name.slice(at + SEPARATOR.length)
    const org = this.deps.store.org(principal.orgId)
    const server = (await org.mcpServers.list()).find((candidate) => candidate.name === serverName && candidate.enabled)
    if (!server) throw unknownTool(name, `this organization has no enabled MCP server named ${JSON.stringify(serverName)}`)
    const span = this.deps.tracing?.tool(callerHeaders, {
      orgId: principal.orgId,
      serverId: server.id,
      serverName: server.name,
      tool,
      listedName: name,
      url: server.url,
    })
    if (!span) return (await this.relay(principal, server, tool, name, args, this.deps.fetch)).result
    try {
      const { result, failure } = await this.relay(principal, server, tool, name, args, span.upstream(this.deps.fetch))
      span.end(failure === null ? {} : { error: failure })
      return result
    } catch (error) {
      span.end(error instanceof ToolRefusal ? { refused: error.message } : { error: String(error) })
      throw error
    }
  }

  /** The call of a known server's tool, held to the rules, limits and budgets, relayed and logged. */
  private async relay(
    principal: Principal,
    server: McpServerRow,
    tool: string,
    name: string,
    args: Record<string, unknown> | undefined,
    fetch: FetchLike,
  ): Promise<{ result: ToolResult; failure: string | null }> {
    const org = this.deps.store.org(principal.orgId)
    if (!offered(server, tool))
      throw refused(new ApiError('access_denied', `tool ${name} is not offered: the server's toolAllow or toolDeny excludes it`))
    const denied = await this.deps.access.refusal(principal, resourcesOf(server, tool))
    if (denied) throw refused(accessDenied(denied.resource, denied.decision))
    const rate = await org.toolRates.rateFor(server.id, tool)
    const costNano = rate?.usdNanoPerCall ?? 0
    // The tool's name stands where a model call's model does: the per-model window counts per tool.
    const verdict = await this.deps.limiter.check({
      orgId: principal.orgId,
      properties: {},
      model: name,
      estimateCents: costNano / NANO_PER_CENT,
    })
    if (!verdict.allowed)
      throw new ToolRefusal(
        MCP_ERRORS.limited,
        `rate limit exceeded: ${verdict.reason}; retry in ${verdict.retryAfterSeconds} s`,
        {
          code: 'rate_limited',
          retryAfterSeconds: verdict.retryAfterSeconds,
        },
      )
    const id = crypto.randomUUID()
    const reservation = await this.deps.budgets.reserve(
      {
        requestId: id,
        orgId: principal.orgId,
        apiKeyId: principal.apiKeyId,
        memberId: principal.memberId,
        model: name,
        provider: MCP_PROVIDER,
        worst: { usd: costNano, tokens: 0 },
      },
      { mayDowngrade: false },
    )
    const hold = reservation.kind === 'held' ? reservation.hold : undefined
    const started = this.now()
    let result: ToolResult
    let failure: string | null = null
    try {
      result = await callTool(
        await this.targetOf(server),
        fetch,
        { name: tool, ...(args ? { arguments: args } : {}) },
        {
          ...(this.deps.callTimeoutMs !== undefined ? { timeoutMs: this.deps.callTimeoutMs } : {}),
        },
      )
      if (result.isError) failure = 'the tool answered with an error'
    } catch (error) {
      if (!(error instanceof UpstreamError)) {
        await this.settle(hold, 0, false)
        throw error
      }
      failure = error.message
      result = { isError: true, content: [{ type: 'text', text: `gw could not call ${name}: ${error.message}` }] }
    }
    const latencyMs = this.now() - started
    const charged = failure === null ? costNano : 0
    await this.settle(hold, charged, failure === null)
    await this.deps.limiter.charge(verdict, charged).catch((error: unknown) => {
      this.deps.log.error('mcp: a rate limit could not be charged', { error: String(error) })
    })
    await this.record({
      id,
      orgId: principal.orgId,
      serverId: server.id,
      serverName: server.name,
      toolName: tool,
      userId: principal.memberId ?? null,
      apiKeyId: principal.apiKeyId ?? null,
      status: failure === null ? 'success' : 'error',
      latencyMs,
      costNano: charged,
      error: failure === null ? null : failure.slice(0, MAX_LOGGED_ERROR_CHARS),
      createdAt: new Date(started),
    })
    return { result, failure }
  }

  private async settle(hold: Hold | undefined, usd: number, succeeded: boolean): Promise<void> {
    if (!hold) return
    try {
      await this.deps.budgets.settle(hold, { usd, tokens: 0, requests: succeeded ? 1 : 0 })
    } catch (error) {
      // The hold lapses on its own; the call has happened and is answered.
      this.deps.log.error('mcp: a budget hold could not be settled', { holdId: hold.id, error: String(error) })
    }
  }

  private async record(call: Parameters<Store['mcpToolCalls']['add']>[0]): Promise<void> {
    try {
      await this.deps.store.mcpToolCalls.add(call)
    } catch (error) {
      this.deps.log.error('mcp: a tool call could not be written to the log', {
        id: call.id,
        orgId: call.orgId,
        error: String(error),
      })
    }
  }

  /** A server's tools, asked at most every TOOL_LIST_TTL_MS; a changed registration is a new key, asked at once. */
  private toolsOf(server: McpServerRow): Promise<UpstreamTool[]> {
    const key = `${server.orgId}:${server.id}:${server.updatedAt.getTime()}`
    return this.toolLists.load(key, async () =>
      listTools(await this.targetOf(server), this.deps.fetch, {
        ...(this.deps.listTimeoutMs !== undefined ? { timeoutMs: this.deps.listTimeoutMs } : {}),
      }),
    )
  }

  private async targetOf(server: McpServerRow): Promise<McpTarget> {
    const token =
      server.sealedToken === null
        ? undefined
        : await this.deps.vault.open(server.sealedToken, sealContexts.mcpServerToken(server))
    return { url: server.url, transport: server.transport, ...(token !== undefined ? { token } : {}) }
  }
}
