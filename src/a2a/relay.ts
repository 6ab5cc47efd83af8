import type { Server } from 'bun'
import type { Authenticator } from '../auth/authenticator'
import type { Principal } from '../auth/principal'
import { requireGatewayScope } from '../auth/scopes'
import { sealContexts, type Vault } from '../auth/vault'
import { type EgressPolicy, EgressRefused } from '../egress/policy'
import { ApiError, callerFacing, egressDisabled, internalError, notFound } from '../errors'
import type { AccessPolicies } from '../governance/policies'
import type { RateLimiter } from '../limits/limiter'
import type { Logger } from '../log'
import type { RelayTrace, Tracing } from '../observability/tracing'
import { errorMessage } from '../store/faults'
import type { A2aAgentRow } from '../store/repositories/a2a-agents'
import type { Clock, Store } from '../store/store'
import { boundedText, readBody } from '../util/read-body'
import { SseParser } from '../util/sse'
import { relayedCard } from './card'

/** What the server hands a handler: the per-request idle timeout, lifted for a stream. */
type TimeoutControl = Pick<Server<undefined>, 'timeout'>

export interface A2aRelayDeps {
  store: Store
  authenticator: Authenticator
  vault: Vault
  egress: EgressPolicy
  access: AccessPolicies
  limiter: RateLimiter
  log: Logger
  /** A span for each relayed call (OpenTelemetry); absent when tracing is off. */
  tracing?: Pick<Tracing, 'agent'>
  /** The largest JSON-RPC request, and the largest non-streamed answer held (GW_MAX_BODY_BYTES). */
  maxBodyBytes: number
  now?: Clock
  /** How long an agent may take to answer whole, or to start a stream, which then runs as long as the agent sends. */
  timeoutMs?: number
}

type RpcId = string | number | null

interface RpcRequest {
  id: RpcId
  method: string
}

const DEFAULT_TIMEOUT_MS = 120_000
const JSONRPC_PARSE_ERROR = -32700
const JSONRPC_INVALID_REQUEST = -32600
const JSONRPC_INTERNAL_ERROR = -32603
/** JSON-RPC's range for the server's own errors: gw's refusals, told apart by `data.code`. */
const GW_ERROR = -32000

/** A refusal in JSON-RPC's own terms: the code a client's A2A library reads, beside gw's code and HTTP status. */
class RpcError extends ApiError {
  constructor(
    readonly rpcCode: number,
    message: string,
  ) {
    super('bad_request', message)
  }
}

const decoder = new TextDecoder()
const encoder = new TextEncoder()

/** The JSON-RPC request's id and method; anything else in it is the agent's to read. */
function parseRequest(body: Uint8Array): RpcRequest {
  let parsed: unknown
  try {
    parsed = JSON.parse(decoder.decode(body))
  } catch {
    throw new RpcError(JSONRPC_PARSE_ERROR, 'the body is not JSON: send one JSON-RPC 2.0 request')
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new RpcError(JSONRPC_INVALID_REQUEST, 'the body must be one JSON-RPC 2.0 request object (batches are not relayed)')
  const { jsonrpc, method, id } = parsed as Record<string, unknown>
  if (jsonrpc !== '2.0') throw new RpcError(JSONRPC_INVALID_REQUEST, 'jsonrpc must be "2.0"')
  if (typeof method !== 'string' || method.length === 0 || method.length > 200)
    throw new RpcError(JSONRPC_INVALID_REQUEST, 'method must be a string of 1 to 200 characters')
  if (id !== undefined && id !== null && typeof id !== 'string' && typeof id !== 'number')
    throw new RpcError(JSONRPC_INVALID_REQUEST, 'id must be a string, a number or null')
  return { id: id ?? null, method }
}

/** A JSON-RPC error answer with the HTTP status of gw's refusal. */
function rpcFailure(error: ApiError, id: RpcId): Response {
  const code =
    error instanceof RpcError
      ? error.rpcCode
      : error.code === 'internal_error'
        ? JSONRPC_INTERNAL_ERROR
        : error.code === 'bad_request' || error.code === 'validation_failed' || error.code === 'payload_too_large'
          ? JSONRPC_INVALID_REQUEST
          : GW_ERROR
  const body = {
    jsonrpc: '2.0',
    id,
    error: { code, message: error.message, data: { code: error.code, ...(error.details ?? {}) } },
  }
  return Response.json(body, {
    status: error.status,
    headers: error.retryAfterSeconds === undefined ? undefined : { 'retry-after': String(error.retryAfterSeconds) },
  })
}

/** An in-band error event: a stream that fails after its first byte says so instead of ending cleanly. */
const streamError = (id: RpcId, message: string): Uint8Array =>
  encoder.encode(
    `data: ${JSON.stringify({ jsonrpc: '2.0', id, error: { code: GW_ERROR, message, data: { code: 'upstream_error' } } })}\n\n`,
  )

/** The JSON-RPC error message in an agent's answer, if it is one. */
function rpcErrorIn(text: string): string | undefined {
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } } | null
    if (parsed && typeof parsed === 'object' && parsed.error !== undefined && parsed.error !== null)
      return typeof parsed.error.message === 'string' ? parsed.error.message : 'the agent answered a JSON-RPC error'
  } catch {
    return 'the agent answered something other than JSON'
  }
  return undefined
}

interface Outcome {
  status: 'success' | 'error'
  error: string | null
}

/**
 * gw as an A2A relay: an A2A client talks JSON-RPC to `/a2a/<agentId>` with a gw API key, and gw, having
 * checked the key (the `gateway` scope), the organisation's access rules on the agent and the global
 * rate limit, forwards the call to the agent with the agent's own key, through the egress policy, and
 * relays the answer (a `message/stream` as its events arrive). Every call that reaches an agent, or is
 * refused by a rule, leaves one row in the A2A call log. Everything is answered in JSON-RPC's shape.
 */
export class A2aRelay {
  private readonly now: Clock
  private readonly timeoutMs: number

  constructor(private readonly deps: A2aRelayDeps) {
    this.now = deps.now ?? Date.now
    this.timeoutMs = deps.timeoutMs ?? DEFAULT_TIMEOUT_MS
  }

  /** The agent's card, as the last probe kept it, with gw's relay address: what A2A clients are pointed at. */
  async card(request: Request, agentId: string): Promise<Response> {
    try {
      const { principal, agent } = await this.admit(request, agentId)
      await this.deps.access.require(principal, [{ kind: 'agent', id: agent.name }])
      if (agent.card === null)
        throw new ApiError(
          'not_found',
          'this agent has no card yet: probe it (POST /v1/a2a/agents/{id}/probe) so gw fetches and checks it',
        )
      return Response.json(relayedCard(agent.card, `${new URL(request.url).origin}/a2a/${agent.id}`))
    } catch (error) {
      return this.failure(error, null)
    }
  }

  /** One JSON-RPC call relayed to the agent. */
  async call(request: Request, agentId: string, server?: TimeoutControl): Promise<Response> {
    const started = this.now()
    let id: RpcId = null
    let span: RelayTrace | undefined
    try {
      const { principal, agent } = await this.admit(request, agentId)
      const body = await readBody(request, this.deps.maxBodyBytes)
      const rpc = parseRequest(body)
      id = rpc.id
      span = this.deps.tracing?.agent(request.headers, {
        orgId: principal.orgId,
        agentId: agent.id,
        agentName: agent.name,
        method: rpc.method,
        url: agent.url,
      })
      const record = (outcome: Outcome) => {
        span?.end(outcome.status === 'error' ? { error: outcome.error ?? 'the call failed' } : {})
        return this.record(principal, agent, rpc.method, started, outcome)
      }
      try {
        await this.deps.access.require(principal, [{ kind: 'agent', id: agent.name }])
      } catch (error) {
        if (error instanceof ApiError) {
          span?.end({ refused: error.message })
          await record({ status: 'error', error: error.message })
        }
        throw error
      }
      const verdict = await this.deps.limiter.check({ orgId: principal.orgId, properties: {}, model: `a2a:${agent.name}` })
      if (!verdict.allowed)
        throw new ApiError('rate_limited', `rate limit exceeded: ${verdict.reason}; retry in ${verdict.retryAfterSeconds} s`, {
          retryAfterSeconds: verdict.retryAfterSeconds,
        })
      if (!this.deps.egress.enabled) throw egressDisabled()
      const fetch = span ? span.upstream(this.deps.egress.guardedFetch) : this.deps.egress.guardedFetch
      return await this.forward(request, agent, body, rpc, record, fetch, server)
    } catch (error) {
      // Refused before the agent was reached (a limit, egress off); a failure of the call has ended it already.
      span?.end(callerFacing(error) ? { refused: errorMessage(error) } : { error: errorMessage(error) })
      return this.failure(error, id)
    }
  }

  /** The caller, with the `gateway` scope, and its organisation's agent: another organisation's is not found. */
  private async admit(request: Request, agentId: string): Promise<{ principal: Principal; agent: A2aAgentRow }> {
    const principal = await this.deps.authenticator.authenticate(request.headers)
    requireGatewayScope(principal)
    const agent = await this.deps.store.org(principal.orgId).a2aAgents.get(agentId)
    if (!agent) throw notFound('A2A agent')
    return { principal, agent }
  }

  private async forward(
    request: Request,
    agent: A2aAgentRow,
    body: Uint8Array,
    rpc: RpcRequest,
    record: (outcome: Outcome) => Promise<void>,
    fetch: EgressPolicy['guardedFetch'],
    server: TimeoutControl | undefined,
  ): Promise<Response> {
    const key =
      agent.sealedKey === null ? undefined : await this.deps.vault.open(agent.sealedKey, sealContexts.a2aAgentKey(agent))
    // The caller leaving ends the agent's call; so does an agent that does not answer in time (a whole
    // answer, or a stream's first byte: a stream then runs as long as the agent sends).
    const upstream = new AbortController()
    const left = () => upstream.abort()
    request.signal.addEventListener('abort', left, { once: true })
    const timer = setTimeout(() => upstream.abort(new Error('timeout')), this.timeoutMs)
    let answer: Response
    try {
      answer = await fetch(agent.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: request.headers.get('accept') ?? 'application/json, text/event-stream',
          ...(key !== undefined ? { authorization: `Bearer ${key}` } : {}),
        },
        body,
        signal: upstream.signal,
      })
    } catch (error) {
      clearTimeout(timer)
      request.signal.removeEventListener('abort', left)
      const failure = this.unreachable(error, upstream.signal)
      await record({ status: 'error', error: failure.message })
      throw failure
    }
    if (!answer.ok) {
      clearTimeout(timer)
      request.signal.removeEventListener('abort', left)
      await answer.body?.cancel().catch(() => undefined)
      const why = answer.status >= 300 && answer.status < 400 ? ' (redirects are not followed)' : ''
      const failure = new ApiError('upstream_error', `the agent answered HTTP ${answer.status}${why}`)
      await record({ status: 'error', error: failure.message })
      throw failure
    }
    const type = answer.headers.get('content-type') ?? 'application/json'
    if (type.toLowerCase().startsWith('text/event-stream')) {
      clearTimeout(timer)
      server?.timeout(request, 0)
      return this.relayStream(answer, upstream, rpc.id, record, () => request.signal.removeEventListener('abort', left))
    }
    try {
      const text = await boundedText(answer, this.deps.maxBodyBytes)
      if (text === undefined)
        throw new ApiError('upstream_error', `the agent's answer is larger than ${this.deps.maxBodyBytes} bytes`)
      const error = rpcErrorIn(text)
      await record(error === undefined ? { status: 'success', error: null } : { status: 'error', error })
      // A new response: the agent's encoding and length headers would be wrong for the decoded body.
      return new Response(text, { status: answer.status, headers: { 'content-type': type } })
    } catch (error) {
      const failure = error instanceof ApiError ? error : this.unreachable(error, upstream.signal)
      await record({ status: 'error', error: failure.message })
      throw failure
    } finally {
      clearTimeout(timer)
      request.signal.removeEventListener('abort', left)
    }
  }

  /**
   * The agent's events passed on as they arrive, each read on the way for a JSON-RPC error; the call is
   * recorded when the stream ends, fails or the caller leaves.
   */
  private relayStream(
    answer: Response,
    upstream: AbortController,
    id: RpcId,
    record: (outcome: Outcome) => Promise<void>,
    done: () => void,
  ): Response {
    const reader = (answer.body as ReadableStream<Uint8Array>).getReader()
    const parser = new SseParser()
    let failed: string | null = null
    let finished = false
    const finish = (outcome: Outcome) => {
      if (finished) return
      finished = true
      done()
      void record(outcome)
    }
    const note = (events: ReturnType<SseParser['push']>) => {
      for (const event of events) {
        const error = rpcErrorIn(event.data)
        if (error !== undefined && failed === null) failed = error
      }
    }
    const stream = new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        try {
          const { done: ended, value } = await reader.read()
          if (ended) {
            note(parser.end())
            finish(failed === null ? { status: 'success', error: null } : { status: 'error', error: failed })
            controller.close()
            return
          }
          note(parser.push(value))
          controller.enqueue(value)
        } catch (error) {
          const message = `the agent's stream broke off: ${errorMessage(error)}`
          finish({ status: 'error', error: message })
          controller.enqueue(streamError(id, message))
          controller.close()
        }
      },
      cancel: async (reason) => {
        finish({ status: 'error', error: 'the caller closed the stream' })
        upstream.abort()
        await reader.cancel(reason).catch(() => undefined)
      },
    })
    return new Response(stream, {
      status: answer.status,
      headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' },
    })
  }

  /** Why the agent could not be reached, as the caller's 502 or 504. */
  private unreachable(error: unknown, signal: AbortSignal): ApiError {
    if (error instanceof EgressRefused)
      return new ApiError('upstream_unreachable', `the egress policy refused the agent: ${error.message}`)
    if (signal.aborted && signal.reason instanceof Error && signal.reason.message === 'timeout')
      return new ApiError('upstream_timeout', `the agent did not answer within ${this.timeoutMs / 1000} s`)
    if (signal.aborted) return new ApiError('client_closed', 'the caller left before the agent answered')
    return new ApiError('upstream_unreachable', `the agent could not be reached: ${errorMessage(error)}`)
  }

  /** One row of the A2A call log; a log that cannot be written is said in the server log, never to the caller. */
  private async record(principal: Principal, agent: A2aAgentRow, method: string, started: number, outcome: Outcome) {
    try {
      await this.deps.store.a2aCalls.add({
        id: crypto.randomUUID(),
        orgId: principal.orgId,
        agentId: agent.id,
        agentName: agent.name,
        skill: method,
        userId: principal.memberId ?? principal.userId ?? null,
        apiKeyId: principal.apiKeyId ?? null,
        status: outcome.status,
        latencyMs: Math.max(0, Math.round(this.now() - started)),
        costNano: null,
        error: outcome.error === null ? null : outcome.error.slice(0, 1000),
        createdAt: new Date(this.now()),
      })
    } catch (error) {
      this.deps.log.error('an A2A call could not be recorded', { agentId: agent.id, error: errorMessage(error) })
    }
  }

  private failure(error: unknown, id: RpcId): Response {
    const facing = callerFacing(error)
    if (facing) return rpcFailure(facing, id)
    this.deps.log.error('unhandled error in the A2A relay', { error: errorMessage(error) })
    return rpcFailure(internalError(), id)
  }
}
