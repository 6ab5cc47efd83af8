import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'
import type { DeliveryObserver, DeliveryOutcome } from '../egress/deliverer'
import type { CallFacts } from '../gateway/call'
import type { RequestLog } from '../gateway/request-log/request-log'
import type { StreamOutcome } from '../gateway/steps/relay'
import type { HealthProbe } from '../util/health-probe'
import { FoldedCounter, FoldedHistogram, key } from './folded'
import { type CallObserver, errorCodeOf, type MetricsExposition } from './observer'
import { pathFamily } from './path-family'

export interface MetricsSources {
  requestLog: RequestLog
  probes: readonly HealthProbe[]
  /** The webhook outbox across organisations: its pending rows are counted at scrape. */
  outbox: { pendingCount(): Promise<number> }
}

/** A scrape must answer even when a dependency hangs: a probe slower than this counts as down. */
export const PROBE_TIMEOUT_MS = 250

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300]
/** gw's own part of a call is usually well under a millisecond: the buckets must tell 0.1 ms from 0.5 ms. */
const OVERHEAD_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1]
/** A batch of the request log is written in milliseconds, or in seconds when the database struggles. */
const WRITE_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
const DELIVERY_OUTCOMES: readonly DeliveryOutcome[] = ['delivered', 'failed', 'dead', 'gone']
const TOKEN_KINDS = ['prompt', 'completion', 'cache_read', 'cache_write'] as const

/** The label keys of one provider, model, path and mode (see `keysOf`). */
interface CallKeys {
  providerPath: string
  cost: string
  /** In the order of TOKEN_KINDS. */
  tokens: readonly string[]
  /** The requests counter's key by outcome: the HTTP status twice, plus one for an error. */
  requests: Map<number, string>
}

/** A map's entry, made the first time it is asked for. */
function childOf<K, V>(map: Map<K, V>, at: K, make: () => V): V {
  let child = map.get(at)
  if (child === undefined) {
    child = make()
    map.set(at, child)
  }
  return child
}

/** The error codes of calls refused before their provider, by the layer that refused them. */
const REFUSALS = new Set(['rate_limited', 'budget_exceeded', 'access_denied'])

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
export class GatewayMetrics implements CallObserver, DeliveryObserver, MetricsExposition {
  readonly registry = new Registry()
  private readonly requests: FoldedCounter<'provider' | 'model' | 'outcome' | 'status' | 'mode' | 'path'>
  private readonly duration: FoldedHistogram<'provider' | 'path'>
  private readonly firstToken: FoldedHistogram<'provider' | 'path'>
  private readonly tokens: FoldedCounter<'provider' | 'model' | 'kind'>
  private readonly cost: FoldedCounter<'provider' | 'model'>
  private readonly refusals: FoldedCounter<'layer'>
  private readonly cacheHits: FoldedCounter<'path'>
  private readonly cacheSavings: FoldedCounter<never>
  private readonly extraAttempts: FoldedCounter<'provider'>
  private readonly providerDuration: FoldedHistogram<'provider' | 'path'>
  private readonly overhead: FoldedHistogram<'path'>
  private readonly deliveries: Counter<'outcome'>

  constructor(sources: MetricsSources) {
    const registers = [this.registry]
    collectDefaultMetrics({ register: this.registry, prefix: 'gw_' })
    this.requests = new FoldedCounter({
      name: 'gw_requests_total',
      help: 'Gateway calls settled, by provider, priced model (else other), outcome, HTTP status, mode and path family',
      labelNames: ['provider', 'model', 'outcome', 'status', 'mode', 'path'],
      registers,
    })
    this.duration = new FoldedHistogram({
      name: 'gw_request_duration_seconds',
      help: 'Whole gateway call, from arrival to settlement (the end of the answer for a stream)',
      labelNames: ['provider', 'path'],
      buckets: LATENCY_BUCKETS,
      registers,
    })
    this.firstToken = new FoldedHistogram({
      name: 'gw_time_to_first_token_seconds',
      help: "Time from a call's arrival to the first bytes of its answer, for calls that report it",
      labelNames: ['provider', 'path'],
      buckets: LATENCY_BUCKETS,
      registers,
    })
    this.tokens = new FoldedCounter({
      name: 'gw_tokens_total',
      help: 'Tokens reported by providers, by kind (prompt, completion, cache_read, cache_write)',
      labelNames: ['provider', 'model', 'kind'],
      registers,
    })
    this.cost = new FoldedCounter({
      name: 'gw_cost_usd_total',
      help: 'What priced calls cost at gw prices, in US dollars (cache hits cost nothing)',
      labelNames: ['provider', 'model'],
      registers,
    })
    this.refusals = new FoldedCounter({
      name: 'gw_refusals_total',
      help: 'Calls refused before their provider, by layer: rate_limited, budget_exceeded, access_denied',
      labelNames: ['layer'],
      registers,
    })
    this.cacheHits = new FoldedCounter({
      name: 'gw_cache_hits_total',
      help: 'Calls answered from the response cache',
      labelNames: ['path'],
      registers,
    })
    this.cacheSavings = new FoldedCounter({
      name: 'gw_cache_savings_usd_total',
      help: 'What the answers served from the response cache cost when first made, in US dollars',
      labelNames: [],
      registers,
    })
    this.extraAttempts = new FoldedCounter({
      name: 'gw_extra_attempts_total',
      help: 'Provider attempts beyond the first of a call: retries, other keys, fallback steps',
      labelNames: ['provider'],
      registers,
    })
    this.providerDuration = new FoldedHistogram({
      name: 'gw_provider_duration_seconds',
      help: "The provider's part of a dispatched call: its waits on providers and the rest of a stream after gw began to answer",
      labelNames: ['provider', 'path'],
      buckets: LATENCY_BUCKETS,
      registers,
    })
    this.overhead = new FoldedHistogram({
      name: 'gw_overhead_seconds',
      help: "gw's own work in a call before its answer began to go out, its waits on providers left out",
      labelNames: ['path'],
      buckets: OVERHEAD_BUCKETS,
      registers,
    })
    this.deliveries = new Counter({
      name: 'gw_webhook_deliveries_total',
      help: 'Outbox delivery attempts by outcome: delivered, failed (tried again later), dead (no attempt left), gone (410, webhook disabled)',
      labelNames: ['outcome'],
      registers,
    })
    for (const outcome of DELIVERY_OUTCOMES) this.deliveries.inc({ outcome }, 0)
    const requestLog = sources.requestLog
    const writes = new Histogram({
      name: 'gw_request_log_write_seconds',
      help: 'How long each request-log batch write took, written or failed',
      buckets: WRITE_BUCKETS,
      registers,
    })
    requestLog.onWrite((ms) => writes.observe(ms / 1000))
    const outbox = sources.outbox
    // A count the database did not give in time is left out of the scrape, not reported as a number.
    let counted = false
    ;new (class extends Gauge {
      override async get() {
        const data = await super.get()
        return counted ? data : { ...data, values: [] }
      }
    })({
      name: 'gw_webhook_outbox_pending',
      help: 'Outbox deliveries waiting to be sent, across organisations, counted at scrape (absent when the database does not answer in time)',
      registers,
      async collect() {
        const pending = await withTimeout<number | undefined>(outbox.pendingCount(), undefined, PROBE_TIMEOUT_MS)
        counted = pending !== undefined
        if (pending !== undefined) this.set(pending)
      },
    })
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

  /**
   * A call's label keys, joined once per provider, model, path and mode: joining them afresh on every
   * call (and hashing the new strings in each map) was most of what metrics cost a call. Bounded as
   * the labels are: models are priced ones or `other`, paths are families.
   */
  private readonly callKeys = new Map<string, Map<string, Map<string, Map<string, CallKeys>>>>()

  private keysOf(provider: string, model: string, path: string, mode: string): CallKeys {
    const byModel = childOf(this.callKeys, provider, () => new Map())
    const byPath = childOf(byModel, model, () => new Map())
    const byMode = childOf(byPath, path, () => new Map())
    return childOf(byMode, mode, () => ({
      providerPath: key(provider, path),
      cost: key(provider, model),
      tokens: TOKEN_KINDS.map((kind) => key(provider, model, kind)),
      requests: new Map(),
    }))
  }

  settled(facts: CallFacts, outcome: StreamOutcome, costNano: number | undefined, endedAt: number): void {
    const provider = facts.provider
    const path = pathFamily(facts.path)
    const model = modelLabel(facts)
    const keys = this.keysOf(provider, model, path, facts.mode)
    // A stream can fail after its 200: the status and the outcome are both in the key.
    const outcomeOf = outcome.httpStatus * 2 + (outcome.status === 'error' ? 1 : 0)
    this.requests.add(
      childOf(keys.requests, outcomeOf, () => key(provider, model, outcome.status, outcome.httpStatus, facts.mode, path)),
    )
    const providerPath = keys.providerPath
    this.duration.add(providerPath, Math.max(0, endedAt - facts.startedAt) / 1000)
    if (outcome.timeToFirstTokenMs !== undefined) this.firstToken.add(providerPath, outcome.timeToFirstTokenMs / 1000)
    const usage = outcome.usage
    if (usage && !facts.cacheHit) {
      const counts = [usage.promptTokens, usage.completionTokens, usage.cacheReadTokens, usage.cacheWriteTokens]
      for (let i = 0; i < TOKEN_KINDS.length; i++) {
        const count = counts[i]
        if (count) this.tokens.add(keys.tokens[i] as string, count)
      }
    }
    if (costNano) this.cost.add(keys.cost, costNano / 1e9)
    const code = outcome.status === 'error' ? errorCodeOf(outcome) : undefined
    if (code && REFUSALS.has(code)) this.refusals.add(code)
    if (facts.cacheHit) {
      this.cacheHits.add(path)
      if (facts.cacheHit.savedNano) this.cacheSavings.add('', facts.cacheHit.savedNano / 1e9)
    }
    const attempts = facts.attempts?.length ?? 0
    if (attempts > 1) this.extraAttempts.add(provider, attempts - 1)
    const { overheadMs, providerMs } = facts.timing.split()
    this.overhead.add(path, overheadMs / 1000)
    if (facts.dispatched) this.providerDuration.add(providerPath, providerMs / 1000)
  }

  deliveryAttempted(outcome: DeliveryOutcome): void {
    this.deliveries.inc({ outcome })
  }

  get contentType(): string {
    return this.registry.contentType
  }

  render(): Promise<string> {
    return this.registry.metrics()
  }
}
