import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'
import type { CallFacts } from '../gateway/call'
import type { RequestLog } from '../gateway/request-log/request-log'
import type { StreamOutcome } from '../gateway/steps/relay'
import type { HealthProbe } from '../util/health-probe'
import type { CallObserver, MetricsExposition } from './observer'

export interface MetricsSources {
  requestLog: RequestLog
  probes: readonly HealthProbe[]
}

/** A scrape must answer even when a dependency hangs: a probe slower than this counts as down. */
export const PROBE_TIMEOUT_MS = 250

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300]
const TOKEN_KINDS = ['prompt', 'completion', 'cache_read', 'cache_write'] as const
/** The error codes of calls refused before their provider, by the layer that refused them. */
const REFUSALS = new Set(['rate_limited', 'budget_exceeded', 'access_denied'])

/** Bounded path labels: the API a call belongs to, never its ids. */
export function pathFamily(path: string): string {
  if (path.startsWith('/v1/chat/') || path === '/v1/completions') return 'chat'
  if (path.startsWith('/v1/messages/batches') || path.startsWith('/v1/batches')) return 'batches'
  if (path.startsWith('/v1/messages')) return 'messages'
  if (path.startsWith('/v1/responses')) return 'responses'
  if (path.startsWith('/v1/embeddings')) return 'embeddings'
  if (path.startsWith('/v1/audio/')) return 'audio'
  if (path.startsWith('/v1/images/')) return 'images'
  if (path.startsWith('/v1/moderations')) return 'moderations'
  if (path.startsWith('/v1/files')) return 'files'
  return 'other'
}

/**
 * A model is named only when gw prices it (the built-in table or an organisation's override), which
 * bounds the label to the models an operator knows; any other name a caller sends counts as `other`.
 */
export function modelLabel(facts: CallFacts): string {
  return facts.price?.model ?? facts.unitPrice?.model ?? 'other'
}

function withTimeout<T>(work: Promise<T>, fallback: T, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms)
  })
  return Promise.race([work.catch(() => fallback), late]).finally(() => clearTimeout(timer))
}

/** gw's Prometheus metrics, in a registry of its own: built only when the operator asks for them. */
export class GatewayMetrics implements CallObserver, MetricsExposition {
  readonly registry = new Registry()
  private readonly requests: Counter<'provider' | 'model' | 'outcome' | 'status' | 'mode' | 'path'>
  private readonly duration: Histogram<'provider' | 'path'>
  private readonly firstToken: Histogram<'provider' | 'path'>
  private readonly tokens: Counter<'provider' | 'model' | 'kind'>
  private readonly cost: Counter<'provider' | 'model'>
  private readonly refusals: Counter<'layer'>
  private readonly cacheHits: Counter<'path'>
  private readonly cacheSavings: Counter
  private readonly extraAttempts: Counter<'provider'>

  constructor(sources: MetricsSources) {
    const registers = [this.registry]
    collectDefaultMetrics({ register: this.registry, prefix: 'gw_' })
    this.requests = new Counter({
      name: 'gw_requests_total',
      help: 'Gateway calls settled, by provider, priced model (else other), outcome, HTTP status, mode and path family',
      labelNames: ['provider', 'model', 'outcome', 'status', 'mode', 'path'],
      registers,
    })
    this.duration = new Histogram({
      name: 'gw_request_duration_seconds',
      help: 'Whole gateway call, from arrival to settlement (the end of the answer for a stream)',
      labelNames: ['provider', 'path'],
      buckets: LATENCY_BUCKETS,
      registers,
    })
    this.firstToken = new Histogram({
      name: 'gw_time_to_first_token_seconds',
      help: "Time from a call's arrival to the first bytes of its answer, for calls that report it",
      labelNames: ['provider', 'path'],
      buckets: LATENCY_BUCKETS,
      registers,
    })
    this.tokens = new Counter({
      name: 'gw_tokens_total',
      help: 'Tokens reported by providers, by kind (prompt, completion, cache_read, cache_write)',
      labelNames: ['provider', 'model', 'kind'],
      registers,
    })
    this.cost = new Counter({
      name: 'gw_cost_usd_total',
      help: 'What priced calls cost at gw prices, in US dollars (cache hits cost nothing)',
      labelNames: ['provider', 'model'],
      registers,
    })
    this.refusals = new Counter({
      name: 'gw_refusals_total',
      help: 'Calls refused before their provider, by layer: rate_limited, budget_exceeded, access_denied',
      labelNames: ['layer'],
      registers,
    })
    this.cacheHits = new Counter({
      name: 'gw_cache_hits_total',
      help: 'Calls answered from the response cache',
      labelNames: ['path'],
      registers,
    })
    this.cacheSavings = new Counter({
      name: 'gw_cache_savings_usd_total',
      help: 'What the answers served from the response cache cost when first made, in US dollars',
      registers,
    })
    this.extraAttempts = new Counter({
      name: 'gw_extra_attempts_total',
      help: 'Provider attempts beyond the first of a call: retries, other keys, fallback steps',
      labelNames: ['provider'],
      registers,
    })
    const requestLog = sources.requestLog
    const logGauge = (name: string, help: string, read: (stats: ReturnType<RequestLog['snapshot']>) => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read(requestLog.snapshot()))
        },
      })
    logGauge('gw_request_log_queued', 'Records waiting to be written to the request log', (s) => s.queued)
    logGauge(
      'gw_request_log_oldest_queued_seconds',
      'How long the oldest queued record has waited',
      (s) => s.oldestQueuedMs / 1000,
    )
    logGauge('gw_request_log_written', 'Records written since start (a counter read at scrape)', (s) => s.written)
    logGauge('gw_request_log_dropped', 'Records dropped since start because the queue was full', (s) => s.dropped)
    logGauge('gw_request_log_bodies_dropped', 'Records written without their bodies since start', (s) => s.bodiesDropped)
    logGauge(
      'gw_request_log_set_aside',
      'Records the database refused, kept in request_log_rejects, since start',
      (s) => s.setAside,
    )
    logGauge('gw_request_log_failed_flushes', 'Batches the database failed to take since start', (s) => s.failedFlushes)
    const probeGauge = (probe: HealthProbe | undefined, name: string, help: string) =>
      new Gauge({
        name,
        help,
        registers,
        async collect() {
          // Absent (no Redis configured) is reported as nothing, not as down.
          if (!probe) return
          const state = await withTimeout(probe.check(), 'down' as const, PROBE_TIMEOUT_MS)
          this.set(state === 'ok' ? 1 : 0)
        },
      })
    probeGauge(
      sources.probes.find((p) => p.name === 'database'),
      'gw_database_up',
      'Whether the database answered a ping at scrape time',
    )
    probeGauge(
      sources.probes.find((p) => p.name === 'redis'),
      'gw_redis_up',
      'Whether Redis answered a ping at scrape time (absent when no Redis is configured)',
    )
  }

  settled(facts: CallFacts, outcome: StreamOutcome, costNano: number | undefined, endedAt: number): void {
    const provider = facts.provider
    const path = pathFamily(facts.path)
    const model = modelLabel(facts)
    this.requests.inc({
      provider,
      model,
      outcome: outcome.status,
      status: String(outcome.httpStatus),
      mode: facts.mode,
      path,
    })
    this.duration.observe({ provider, path }, Math.max(0, endedAt - facts.startedAt) / 1000)
    if (outcome.timeToFirstTokenMs !== undefined) this.firstToken.observe({ provider, path }, outcome.timeToFirstTokenMs / 1000)
    const usage = outcome.usage
    if (usage && !facts.cacheHit) {
      const counts = [usage.promptTokens, usage.completionTokens, usage.cacheReadTokens, usage.cacheWriteTokens]
      TOKEN_KINDS.forEach((kind, i) => {
        const count = counts[i]
        if (count) this.tokens.inc({ provider, model, kind }, count)
      })
    }
    if (costNano) this.cost.inc({ provider, model }, costNano / 1e9)
    if (outcome.status === 'error' && outcome.error) {
      const code = outcome.error.slice(0, outcome.error.indexOf(':'))
      if (REFUSALS.has(code)) this.refusals.inc({ layer: code })
    }
    if (facts.cacheHit) {
      this.cacheHits.inc({ path })
      if (facts.cacheHit.savedNano) this.cacheSavings.inc(facts.cacheHit.savedNano / 1e9)
    }
    const attempts = facts.attempts?.length ?? 0
    if (attempts > 1) this.extraAttempts.inc({ provider }, attempts - 1)
  }

  get contentType(): string {
    return this.registry.contentType
  }

  render(): Promise<string> {
    return this.registry.metrics()
  }
}
