import {
  type Attributes,
  type Context,
  DiagLogLevel,
  diag,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  type TextMapSetter,
  trace,
} from '@opentelemetry/api'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources'
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  type SpanExporter,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace'
import type { CallFacts } from '../gateway/call'
import type { CallFields } from '../gateway/steps/read-call'
import type { StreamOutcome } from '../gateway/steps/relay'
import type { Logger } from '../log'
import { redactPii } from '../security/pii'
import { VERSION } from '../version'
import { errorCodeOf } from './observer'
import {
  type AgentCallFacts,
  type AttemptTrace,
  type CallContent,
  type CallTrace,
  operationOf,
  type RelayTrace,
  type ToolCallFacts,
  type Tracing,
  type TracingConfig,
} from './tracing'

const headerGetter: TextMapGetter<Headers> = {
  keys: (headers) => [...headers.keys()],
  get: (headers, key) => headers.get(key) ?? undefined,
}
const headerSetter: TextMapSetter<Headers> = { set: (headers, key, value) => headers.set(key, value) }

/** The longest body a span carries when content is captured: collectors refuse very large spans. */
const CONTENT_MAX_CHARS = 16 * 1024
/** At most one line of the SDK's complaints (a collector that is down) per minute. */
const DIAG_LOG_EVERY_MS = 60_000

function samplerOf(config: TracingConfig): Sampler {
  const ratio = () => new TraceIdRatioBasedSampler(config.ratio)
  switch (config.sampler) {
    case 'always_on':
      return new AlwaysOnSampler()
    case 'always_off':
      return new AlwaysOffSampler()
    case 'traceidratio':
      return ratio()
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() })
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio() })
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() })
  }
}

/** The OpenTelemetry SDK speaks through a global logger: its failures go to gw's log, seldom. */
function routeDiagnostics(log: Logger): void {
  let lastAt = 0
  const warn = (message: string, ...args: unknown[]) => {
    const now = Date.now()
    if (now - lastAt < DIAG_LOG_EVERY_MS) return
    lastAt = now
    log.warn('tracing: the OpenTelemetry exporter reported a problem', { message, detail: args.map(String).join(' ') })
  }
  const quiet = () => undefined
  diag.setLogger(
    { error: warn, warn, info: quiet, debug: quiet, verbose: quiet },
    { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
  )
}

const cut = (text: string) => (text.length > CONTENT_MAX_CHARS ? `${text.slice(0, CONTENT_MAX_CHARS)}...` : text)

/** `gen_ai.provider.name` and the older `gen_ai.system` it replaced: collectors read one or the other. */
const providerAttributes = (provider: string): Attributes =>
  provider === 'gw' ? {} : { 'gen_ai.provider.name': provider, 'gen_ai.system': provider }

/** Parsing a URL costs more than the rest of an attempt's span: the few providers' addresses are kept. */
const servers = new Map<string, Attributes>()
const SERVERS_KEPT = 256

function serverOf(url: string): Attributes {
  const pathAt = url.indexOf('/', url.indexOf('//') + 2)
  const origin = pathAt < 0 ? url : url.slice(0, pathAt)
  const known = servers.get(origin)
  if (known) return known
  let attributes: Attributes = {}
  try {
    const parsed = new URL(origin)
    const port = parsed.port ? Number(parsed.port) : parsed.protocol === 'https:' ? 443 : 80
    attributes = { 'server.address': parsed.hostname, 'server.port': port }
  } catch {
    // Not a URL: the span goes without the server's address.
  }
  if (servers.size >= SERVERS_KEPT) servers.clear()
  servers.set(origin, attributes)
  return attributes
}

/** The error code gw answered with (`rate_limited`, `upstream_error`, ...), else the HTTP status. */
const errorType = (outcome: StreamOutcome): string => errorCodeOf(outcome) ?? String(outcome.httpStatus)

class OtelCallTrace implements CallTrace {
  private servedSpan: Span | undefined
  /** Attempts neither failed nor served yet: one cut short (the caller left) ends with the call. */
  private readonly pending = new Set<Span>()
  private readonly context: Context

  constructor(
    private readonly tracing: OtelTracing,
    private readonly span: Span,
    private readonly operation: string,
  ) {
    this.context = trace.setSpan(ROOT_CONTEXT, span)
  }

  private readonly unrecorded: AttemptTrace = {
    inject: (headers) => this.tracing.propagator.inject(this.context, headers, headerSetter),
    failed: () => undefined,
    served: () => undefined,
  }

  requested(fields: CallFields): void {
    if (!this.span.isRecording()) return
    this.span.updateName(`${this.operation} ${fields.model}`)
    this.span.setAttribute('gen_ai.request.model', fields.model)
    if (fields.maxOutputTokens !== undefined) this.span.setAttribute('gen_ai.request.max_tokens', fields.maxOutputTokens)
  }

  attempt(target: { provider: string; model: string; url: string }): AttemptTrace {
    // A call the sampler left out records nothing: its context alone is passed on, marked not sampled.
    if (!this.span.isRecording()) return this.unrecorded
    const span = this.tracing.tracer.startSpan(
      `${this.operation} ${target.model}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'gen_ai.operation.name': this.operation,
          'gen_ai.request.model': target.model,
          ...providerAttributes(target.provider),
          ...serverOf(target.url),
        },
      },
      this.context,
    )
    const context = trace.setSpan(ROOT_CONTEXT, span)
    this.pending.add(span)
    return {
      inject: (headers) => this.tracing.propagator.inject(context, headers, headerSetter),
      failed: (httpStatus, error) => {
        this.pending.delete(span)
        if (httpStatus !== undefined) span.setAttribute('http.response.status_code', httpStatus)
        span.setAttribute('error.type', httpStatus === undefined ? 'no_answer' : String(httpStatus))
        span.setStatus({ code: SpanStatusCode.ERROR, message: error })
        span.end()
      },
      served: (httpStatus) => {
        this.pending.delete(span)
        span.setAttribute('http.response.status_code', httpStatus)
        this.servedSpan = span
      },
    }
  }

  end(facts: CallFacts, outcome: StreamOutcome, costNano: number | undefined, content: CallContent): void {
    if (!this.span.isRecording()) return
    const usage = outcome.usage
    const responseModel = outcome.servedModel ?? (facts.dispatched ? facts.model : undefined)
    const answered: Attributes = {
      ...(responseModel !== undefined ? { 'gen_ai.response.model': responseModel } : {}),
      ...(usage
        ? {
            'gen_ai.usage.input_tokens': usage.promptTokens,
            'gen_ai.usage.output_tokens': usage.completionTokens,
            'gen_ai.usage.cache_read.input_tokens': usage.cacheReadTokens,
            'gen_ai.usage.cache_creation.input_tokens': usage.cacheWriteTokens,
          }
        : {}),
      ...(outcome.finishReasons?.length ? { 'gen_ai.response.finish_reasons': outcome.finishReasons } : {}),
    }
    const failed = outcome.status === 'error'
    this.span.setAttributes({
      ...providerAttributes(facts.provider),
      ...answered,
      'http.response.status_code': outcome.httpStatus,
      'gw.org_id': facts.principal.orgId,
      'gw.gateway_mode': facts.mode,
      'gw.cache_hit': facts.cacheHit !== undefined,
      'gw.attempts': facts.attempts?.length ?? 0,
      ...(costNano !== undefined ? { 'gw.cost_usd': costNano / 1e9 } : {}),
      ...(facts.chainId ? { 'gw.fallback_chain_id': facts.chainId } : {}),
      ...(facts.downgradedFrom ? { 'gw.downgraded_from': facts.downgradedFrom } : {}),
      ...(failed ? { 'error.type': errorType(outcome) } : {}),
      ...this.content(content),
    })
    // The caller's mistake (a 4xx) is not a failure of the service; gw's or the provider's is.
    if (failed && outcome.httpStatus >= 500) this.span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error })
    if (this.servedSpan) {
      this.servedSpan.setAttributes(answered)
      if (failed) {
        this.servedSpan.setAttribute('error.type', errorType(outcome))
        this.servedSpan.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error })
      }
      this.servedSpan.end()
    }
    for (const cutShort of this.pending) {
      cutShort.setAttribute('error.type', errorType(outcome))
      cutShort.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error ?? 'the attempt did not finish' })
      cutShort.end()
    }
    this.pending.clear()
    this.span.end()
  }

  /** The bodies, only when the operator opted in and the organisation keeps bodies; redacted when it redacts. */
  private content(content: CallContent): Attributes {
    if (!this.tracing.config.captureContent || !content.policy.store) return {}
    const keep = (text: string) => cut(content.policy.redact ? redactPii(text).text : text)
    return { 'gw.request.body': keep(content.request()), 'gw.response.body': keep(content.response()) }
  }
}

/**
 * Traces over OpenTelemetry: spans batched and posted to the collector over OTLP/HTTP off the request
 * path (a full queue drops spans, never waits), sampled as the standard variables say, with the
 * caller's W3C trace context continued. Nothing is registered globally but the SDK's diagnostics
 * logger: gw's spans come from its own provider.
 */
export class OtelTracing implements Tracing {
  readonly tracer
  readonly propagator = new W3CTraceContextPropagator()
  private readonly provider: TracerProvider

  constructor(
    readonly config: TracingConfig,
    log: Logger,
    /** Tests hand in their own exporter; the collector's otherwise. */
    exporter: SpanExporter = new OTLPTraceExporter({ url: config.url }),
  ) {
    routeDiagnostics(log)
    const resource = defaultResource()
      .merge(detectResources({ detectors: [envDetector] }))
      .merge(resourceFromAttributes({ 'service.name': config.serviceName, 'service.version': VERSION }))
    this.provider = new TracerProvider({
      resource,
      sampler: samplerOf(config),
      spanProcessors: [new BatchSpanProcessor({ exporter, ...config.batch })],
    })
    this.tracer = this.provider.getTracer('gw', VERSION)
  }

  call(callerHeaders: Headers, facts: CallFacts): CallTrace {
    const operation = operationOf(facts.path)
    const parent = this.propagator.extract(ROOT_CONTEXT, callerHeaders, headerGetter)
    const span = this.tracer.startSpan(
      `${operation} ${facts.model}`,
      {
        kind: SpanKind.SERVER,
        startTime: facts.startedAt,
        attributes: {
          'gen_ai.operation.name': operation,
          'http.request.method': 'POST',
          'url.path': facts.path,
          'gw.request_id': facts.requestId,
        },
      },
      parent,
    )
    return new OtelCallTrace(this, span, operation)
  }

  tool(callerHeaders: Headers, tool: ToolCallFacts): RelayTrace {
    const attributes: Attributes = {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': tool.listedName,
      'mcp.method.name': 'tools/call',
      'gw.org_id': tool.orgId,
      'gw.mcp_server.id': tool.serverId,
      'gw.mcp_server.name': tool.serverName,
    }
    return this.relayed(callerHeaders, `tools/call ${tool.listedName}`, attributes, {
      name: `execute_tool ${tool.tool}`,
      attributes: { 'gen_ai.tool.name': tool.tool },
      url: tool.url,
      errorType: 'tool_error',
    })
  }

  agent(callerHeaders: Headers, agent: AgentCallFacts): RelayTrace {
    const attributes: Attributes = {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.id': agent.agentId,
      'gen_ai.agent.name': agent.agentName,
      'rpc.system': 'jsonrpc',
      'rpc.method': agent.method,
      'gw.org_id': agent.orgId,
    }
    return this.relayed(callerHeaders, `invoke_agent ${agent.agentName}`, attributes, {
      name: `invoke_agent ${agent.agentName}`,
      attributes: {},
      url: agent.url,
      errorType: 'agent_error',
    })
  }

  /**
   * A call gw relays to a server of the organisation's (an MCP server's tool, an A2A agent): a server
   * span in the caller's trace, and a client span for the request to the server, which is sent the
   * trace context.
   */
  private relayed(
    callerHeaders: Headers,
    name: string,
    attributes: Attributes,
    upstreamSpan: { name: string; attributes: Attributes; url: string; errorType: string },
  ): RelayTrace {
    const parent = this.propagator.extract(ROOT_CONTEXT, callerHeaders, headerGetter)
    const span = this.tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent)
    const context = trace.setSpan(ROOT_CONTEXT, span)
    let upstream: Span | undefined
    let ended = false
    return {
      upstream: <F extends (input: string | URL, init?: RequestInit) => Promise<Response>>(fetch: F): F => {
        // Started by the first request to the server: a call refused before it has no such span.
        const traced = (input: string | URL, init?: RequestInit) => {
          upstream ??= this.tracer.startSpan(
            upstreamSpan.name,
            {
              kind: SpanKind.CLIENT,
              attributes: { ...attributes, ...upstreamSpan.attributes, ...serverOf(upstreamSpan.url) },
            },
            context,
          )
          const headers = new Headers(init?.headers)
          this.propagator.inject(trace.setSpan(ROOT_CONTEXT, upstream), headers, headerSetter)
          return fetch(input, { ...init, headers })
        }
        return traced as F
      },
      end: ({ error, refused }) => {
        // The first ending is the call's: a refusal recorded as a failed call ends nothing twice.
        if (ended) return
        ended = true
        if (refused !== undefined) span.setAttribute('error.type', 'refused')
        if (error !== undefined) {
          span.setAttribute('error.type', upstreamSpan.errorType)
          span.setStatus({ code: SpanStatusCode.ERROR, message: error })
        }
        if (upstream) {
          if (error !== undefined) {
            upstream.setAttribute('error.type', upstreamSpan.errorType)
            upstream.setStatus({ code: SpanStatusCode.ERROR, message: error })
          }
          upstream.end()
        }
        span.end()
      },
    }
  }

  async shutdown(): Promise<void> {
    await this.provider.shutdown()
  }
}
