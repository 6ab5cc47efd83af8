import type { Principal } from '../auth/principal'
import type { LimitVerdict } from '../limits/limiter'
import type { ModelPrice } from '../money/prices'
import type { UnitPrice } from '../money/unit-prices'
import type { CallTrace } from '../observability/tracing'
import type { Hold } from '../spend/enforcer'
import type { CallAttempt } from '../store/json-columns'
import type { CacheUse } from './cache/use'
import type { DispatchPath, DispatchRoute } from './dispatch-routes'
import type { GatewayMeta } from './meta/store'
import type { CallerWireFormat } from './providers/provider'
import { newRequestId } from './request-id'
import { BodyCapture } from './request-log/body-capture'
import type { RoutePlan } from './routing/policy'
import { type Caller, readCaller } from './steps/caller'
import type { ReadCall } from './steps/read-call'
import type { StreamOutcome } from './steps/relay'
import { CallTiming } from './timing'

/** One provider-style call as the HTTP entry hands it over, its caller authenticated. */
export interface GatewayCall {
  principal: Principal
  path: DispatchPath
  request: Request
  /**
   * The body as sent, decoded; parsed by the gateway so that even a malformed one is answered with the
   * Gw-* headers. For a binary body (a multipart upload), a note of its type and size, which is what
   * the request log keeps of it.
   */
  bodyText: string
  /** A binary body's bytes, never decoded (a multipart upload). */
  bodyBytes?: Uint8Array
  /** Lifts the server's idle timeout for this request (long streams are quiet between tokens). */
  keepAlive(): void
}

/**
 * What is known about a call so far: each step of the pipeline hands back what it learnt and the
 * pipeline adds it here, so however the call ends, its headers, metadata and record say as much as
 * was known. Steps read it; none changes it.
 */
export interface CallFacts {
  readonly requestId: string
  readonly startedAt: number
  readonly principal: Principal
  /** The path as called (a provider API's with its ids): what the record keeps. */
  readonly path: string
  readonly callerFormat: CallerWireFormat
  readonly caller: Caller
  /** `gw` until a provider is chosen. */
  readonly provider: string
  /** `unknown` until the requested model is known to be one a record and a header can hold. */
  readonly model: string
  readonly mode: 'passthrough' | 'translated'
  readonly translationWarning?: string
  readonly price?: ModelPrice
  /** Where the price came from (`builtin`, `override:<id>`): the record says which price it used. */
  readonly priceSource?: string
  /** The price of a model billed by the character or the second, instead of by tokens. */
  readonly unitPrice?: UnitPrice
  readonly estimatedCostNano?: number
  /** The most tokens the call can be billed for, for limits on tokens. */
  readonly estimatedTokens?: number
  /** The model the caller asked for, when a budget's downgrade served another. */
  readonly downgradedFrom?: string
  /** What the call holds against its budgets, settled with the call. */
  readonly hold?: Hold
  /** Billed to the organisation's credits: the call runs on the operator's provider key. */
  readonly ptb: boolean
  /** True once the provider was called: a call refused before that has no cost to report. */
  readonly dispatched: boolean
  /** Why a call that reached its provider has no cost in gw's record, when gw knows it never will. */
  readonly unpriced?: string
  /** The fallback chain serving the call, when its model is a chain's alias. */
  readonly chainId?: string
  /** Every provider call made so far: retries, other keys, fallback steps. */
  readonly attempts?: readonly CallAttempt[]
  /** Answered from the response cache: what the answer cost when it was first made. */
  readonly cacheHit?: { savedNano: number | undefined }
  /** Whether the response cache had an answer, when the caller asked it: the Gw-Cache header. */
  readonly cacheStatus?: 'HIT' | 'MISS'
  /** The rate limiter's verdict, once asked: its figures go out in the Gw-RateLimit-* headers. */
  readonly limit?: LimitVerdict
  readonly requestBody: BodyCapture
  /** What the caller was answered, as far as it was kept; filled as the answer goes out. */
  readonly responseBody: BodyCapture
  /** Its waits on providers and when its answer went out: gw's own part of the call's time. */
  readonly timing: CallTiming
  /** Its span, when tracing is on. */
  readonly trace?: CallTrace
}

/** The facts of a call that has just arrived. */
export function openCall(
  call: Pick<GatewayCall, 'principal' | 'request' | 'bodyText'> & { path: string },
  format: CallerWireFormat,
  startedAt: number,
  countryHeader?: string,
): CallFacts {
  return {
    requestId: newRequestId(),
    startedAt,
    principal: call.principal,
    path: call.path,
    callerFormat: format,
    caller: readCaller(call.request.headers, countryHeader),
    provider: 'gw',
    model: 'unknown',
    mode: 'passthrough',
    ptb: false,
    dispatched: false,
    requestBody: BodyCapture.of(call.bodyText),
    responseBody: new BodyCapture(),
    timing: new CallTiming(),
  }
}

/** Settles a finished call (steps/settle.ts): prices, charges and records it, and keeps its metadata. */
export type Settlement = (facts: CallFacts, outcome: StreamOutcome) => Promise<GatewayMeta>

/**
 * A call being answered: its facts as the steps learn them, its caller's signal, and its one
 * settlement. The first outcome settled is the call's; every later way out (a stream ending after its
 * error was answered, say) gets the same metadata back.
 */
export class CallState {
  private settled: Promise<GatewayMeta> | undefined

  constructor(
    public facts: CallFacts,
    /** The caller's request signal: aborted when the caller left. */
    readonly signal: AbortSignal,
    private readonly settlement: Settlement,
  ) {}

  settle(facts: CallFacts, outcome: StreamOutcome): Promise<GatewayMeta> {
    this.settled ??= this.settlement(facts, outcome)
    return this.settled
  }

  /** One more provider call, or a step passed over, in the call's attempts. */
  attempted(attempt: CallAttempt, more?: Partial<CallFacts>): void {
    this.facts = { ...this.facts, ...more, attempts: [...(this.facts.attempts ?? []), attempt] }
  }
}

/** A dispatch call being served: the call and its route, what was read of it, its plan and its use of the cache. */
export interface Dispatch {
  readonly call: GatewayCall
  readonly route: DispatchRoute
  readonly read: ReadCall
  readonly plan: RoutePlan
  readonly state: CallState
  cache?: CacheUse
}
