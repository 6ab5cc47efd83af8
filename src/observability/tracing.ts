import type { BodyPolicy } from '../directory/call-settings'
import type { CallFacts } from '../gateway/call'
import type { CallFields } from '../gateway/steps/read-call'
import type { StreamOutcome } from '../gateway/steps/relay'
import { pathFamily } from './path-family'

/** OpenTelemetry's sampler names (OTEL_TRACES_SAMPLER), those gw offers. */
export const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const
export type SamplerName = (typeof SAMPLERS)[number]

export interface TracingConfig {
  /** Where spans are posted (OTLP/HTTP, JSON). */
  url: string
  serviceName: string
  sampler: SamplerName
  /** The ratio a traceidratio sampler keeps. */
  ratio: number
  /** Request and response bodies on the call's span, as far as the organisation keeps them. */
  captureContent: boolean
  batch: { scheduledDelayMillis: number; exportTimeoutMillis: number; maxQueueSize: number; maxExportBatchSize: number }
}

/**
 * What the gateway tells a tracer: one span per call, one child per provider attempt, and the W3C
 * trace context passed on to the provider. When tracing is off there is no tracer at all, so the
 * request path does no work for it. This file holds no OpenTelemetry code: those packages are loaded
 * (otel.ts) only when the operator names a collector.
 */
export interface Tracing {
  /** Opens a gateway call's span, continuing the caller's trace when its `traceparent` names one. */
  call(callerHeaders: Headers, facts: CallFacts): CallTrace
  /** Opens the span of a tool call relayed by gw's MCP server, continuing the caller's trace. */
  tool(callerHeaders: Headers, tool: ToolCallFacts): RelayTrace
  /** Opens the span of a call relayed to an A2A agent, continuing the caller's trace. */
  agent(callerHeaders: Headers, agent: AgentCallFacts): RelayTrace
  /** Sends what is still buffered; for shutdown. */
  shutdown(): Promise<void>
}

export interface CallTrace {
  /** The call's body was read: the model asked for and the request's parameters. */
  requested(fields: CallFields): void
  /** A provider attempt: its span starts now. */
  attempt(target: { provider: string; model: string; url: string }): AttemptTrace
  /** The call settled: its span ends with what settlement learnt. */
  end(facts: CallFacts, outcome: StreamOutcome, costNano: number | undefined, content: CallContent): void
}

export interface AttemptTrace {
  /** Sets `traceparent` (and `tracestate`) on the provider's request: the provider's spans join the trace. */
  inject(headers: Headers): void
  /** The attempt failed: its span ends, saying why. */
  failed(httpStatus: number | undefined, error: string): void
  /** The attempt serves the call: its span stays open until the answer has gone out. */
  served(httpStatus: number): void
}

/** What a call's span may carry of its bodies, when the operator opts in: the organisation's policy decides. */
export interface CallContent {
  policy: BodyPolicy
  request(): string
  response(): string
}

export interface ToolCallFacts {
  orgId: string
  serverId: string
  serverName: string
  /** The tool as its server names it. */
  tool: string
  /** The tool as gw lists it: `<server>__<tool>`. */
  listedName: string
  url: string
}

export interface AgentCallFacts {
  orgId: string
  agentId: string
  agentName: string
  /** The JSON-RPC method called (`message/send`, `message/stream`, ...). */
  method: string
  url: string
}

/** A call gw relays to a server of the organisation's: an MCP server's tool, an A2A agent. */
export interface RelayTrace {
  /** The fetch that reaches the server: its first request starts the span of the call to the server, and carries its trace context. */
  upstream<F extends (input: string | URL, init?: RequestInit) => Promise<Response>>(fetch: F): F
  end(outcome: { error?: string; refused?: string }): void
}

/**
 * The GenAI semantic conventions' operation for a gateway path. A path they name no operation for (audio,
 * images, moderations) keeps gw's own family name.
 */
export function operationOf(path: string): string {
  if (path === '/v1/completions') return 'text_completion'
  const family = pathFamily(path)
  return family === 'messages' || family === 'responses' ? 'chat' : family
}
