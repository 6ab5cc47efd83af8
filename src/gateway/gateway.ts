/**
 * The gateway's request path, top to bottom: `dispatch` reads as its steps, each a function of
 * `steps/` (or of `routing/` and `cache/`) that takes what it needs and hands back what it learnt.
 * The HTTP entry (entry.ts) has authenticated the caller and read the body; here the call is read,
 * its route planned (a fallback chain's steps, retries), its model resolved, its keys found, its cost
 * estimated, its limits checked, the response cache asked, the provider called attempt by attempt
 * (budgets held and credits checked for each), the answer relayed (translated when the formats
 * differ), and the call settled: priced, charged, recorded, and its metadata kept.
 */
import type { Principal } from '../auth/principal'
import { requireGatewayScope } from '../auth/scopes'
import type { EgressPolicy } from '../egress/policy'
import { errorBody } from '../error-answers'
import { badRequest, callerFacing, internalError } from '../errors'
import type { AccessPolicies } from '../governance/policies'
import type { RateLimiter } from '../limits/limiter'
import type { Logger } from '../log'
import { NANO_PER_USD } from '../money/cost'
import type { PriceSource } from '../money/price-book'
import type { CallObserver } from '../observability/observer'
import type { AttemptTrace, Tracing } from '../observability/tracing'
import type { BudgetEnforcer } from '../spend/enforcer'
import { errorMessage } from '../store/faults'
import type { ChainStep } from '../store/json-columns'
import type { Store } from '../store/store'
import { type CacheRequest, readCacheRequest } from './cache/headers'
import { StreamKeeper } from './cache/keeper'
import { cacheKey } from './cache/key'
import { type CachedAnswer, MAX_CACHED_ANSWER_BYTES, type ResponseCache } from './cache/store'
import { type CallFacts, type GatewayCall, openCall } from './call'
import { DISPATCH_ROUTES, type ProviderApi } from './dispatch-routes'
import type { GatewayMeta, MetaStore } from './meta/store'
import {
  type OrgKeySource,
  type ProviderAdapter,
  type ProviderCredentials,
  type ProviderName,
  parseJson,
} from './providers/provider'
import { PROVIDERS, resolveModel } from './providers/registry'
import type { BodyPolicySource } from './request-log/body-capture'
import type { RequestLog } from './request-log/request-log'
import type { ChainSource } from './routing/chains'
import type { KeyHealth } from './routing/key-health'
import { pickKey } from './routing/pick-key'
import {
  coolDownMs,
  fallsThrough,
  keyFailing,
  pause,
  planFor,
  type RoutePlan,
  retryable,
  retryDelayMs,
  skippedStep,
} from './routing/policy'
import { CreditBalances, checkLimits, estimateCost, rateLimited, spendCall } from './steps/admission'
import { type KeyCandidate, keyCandidates, ownCredentials, requireProviderApiScope } from './steps/credentials'
import { type ReadCall, readJsonCall, readMultipartCall } from './steps/read-call'
import { relayRaw, relayStream, type StreamOutcome } from './steps/relay'
import { jsonAnswer, withGatewayHeaders } from './steps/respond'
import { pointResultsAtGw } from './steps/results-url'
import { outgoingBody, upstreamPathFor } from './steps/route'
import { type SettlementDeps, settle } from './steps/settle'
import { unitEstimate, unitMeasure } from './steps/units'
import {
  attemptProvider,
  callProvider,
  clientClosed,
  type FailedAnswer,
  passProviderHeaders,
  readProviderFailure,
  type Served,
  type Unserved,
  type UpstreamRequest,
} from './steps/upstream'
import { failureBody } from './translate/errors'
import { type Translation, translationBetween } from './translate/pairs'

export interface GatewayConfig {
  providers: Record<ProviderName, ProviderCredentials>
  metaTtlSeconds: number
  /** How long to wait for a provider's response headers before answering 504. */
  upstreamTimeoutMs: number
  /** The request header a trusted proxy in front of gw sets to the caller's country (GW_COUNTRY_HEADER). */
  countryHeader?: string
  /** Where callers reach gw (GW_PUBLIC_URL), for links gw hands out; the address a call came to when absent. */
  publicUrl?: string
}

/** What the gateway reads of an organisation's settings on a call (the settings service caches them). */
export interface OrgCallSettings extends BodyPolicySource {
  /** Whether the organisation's streams end with the `gw` frame when a call does not ask for it. */
  streamMetaFrame(orgId: string): Promise<boolean>
}

export interface GatewayDeps {
  config: GatewayConfig
  store: Store
  limiter: RateLimiter
  budgets: BudgetEnforcer
  prices: PriceSource
  orgKeys: OrgKeySource
  bodies: OrgCallSettings
  meta: MetaStore
  requestLog: RequestLog
  /** An organisation's fallback chains. */
  chains: ChainSource
  /** Who may use which provider and model: the organisation's access rules. */
  access: Pick<AccessPolicies, 'require'>
  /** Which provider keys are cooling down after a 429 or a failure, shared between instances through Redis. */
  keyHealth: KeyHealth
  /** The response cache: in process, or Redis. */
  cache: ResponseCache
  /** Checks the addresses organisations configure (a provider key's base URL) when a call connects. */
  egress: Pick<EgressPolicy, 'guardedFetch'>
  log: Logger
  /** Told of each settled call (Prometheus metrics); absent when metrics are off. */
  observer?: CallObserver
  /** A span for each call and its attempts (OpenTelemetry); absent when tracing is off. */
  tracing?: Tracing
  now?: () => number
  /** Picks a key by weight and an answer of a full cache bucket; seeded in tests. */
  random?: () => number
}

/** Settles a call: see `settlesOnce`. */
type Settle = (facts: CallFacts, outcome: StreamOutcome) => Promise<GatewayMeta>

/** A provider API call as the HTTP entry hands it over: authenticated, its body (if any) read as bytes. */
export interface ProviderApiCall {
  principal: Principal
  api: ProviderApi
  request: Request
  body?: Uint8Array
  /** What the request log keeps of the body: a note of its type and size. */
  bodyText: string
}

/** A call made ready for its provider (see `Gateway.prepare`). */
interface Prepared {
  facts: CallFacts
  provider: ProviderAdapter
  translation: Translation | undefined
  upstreamPath: string
  outgoing: Awaited<ReturnType<typeof outgoingBody>>
  /** The keys the call may run on, one picked per attempt. */
  keys: KeyCandidate[]
  units: ReturnType<typeof unitMeasure>
  /** The caller asked for a stream: an attempt serves once its first bytes came. */
  streams: boolean
}

/** The call's facts as they grow, and its one settlement, shared by the steps that serve it. */
interface CallState {
  facts: CallFacts
  settle: Settle
}

/** The response cache as one call uses it. */
interface CacheUse {
  ask: CacheRequest
  key: string
}

/** A call being served: what it is, how, and what is known of it so far. */
interface Serving {
  call: GatewayCall
  read: ReadCall
  plan: RoutePlan
  state: CallState
  cache?: CacheUse
}

/**
 * The most keys one try of a step goes through before it waits for a retry or moves on: enough to get
 * past a key that is limited or failing, not so many that an organisation with dozens of keys turns
 * one call into dozens.
 */
const KEYS_PER_TRY = 3
const NOTHING_COOLING: ReadonlySet<string> = new Set()
const JSON_TYPE = 'application/json'
const SSE_TYPE = 'text/event-stream; charset=utf-8'

/** A pass-through's one attempt: its answer, whatever its status, is the call's. */
function settledAttempt(span: AttemptTrace | undefined, response: Response): void {
  if (!span) return
  if (response.ok) span.served(response.status)
  else span.failed(response.status, `the provider answered ${response.status}`)
}

const isJson = (response: Response) => response.headers.get('content-type')?.includes('json') === true

const UNPRICED_APIS = "files and batches are billed by the provider to the organization's own key; gw does not price them"

export class Gateway {
  private readonly now: () => number
  private readonly random: () => number
  private readonly credits: CreditBalances
  private readonly settlement: SettlementDeps

  constructor(private readonly deps: GatewayDeps) {
    this.now = deps.now ?? Date.now
    this.random = deps.random ?? Math.random
    this.credits = new CreditBalances(deps.store, deps.requestLog, this.now)
    this.settlement = { ...deps, metaTtlSeconds: deps.config.metaTtlSeconds, credits: this.credits, now: this.now }
  }

  async dispatch(call: GatewayCall): Promise<Response> {
    const route = DISPATCH_ROUTES[call.path]
    const state: CallState = {
      facts: this.traced(openCall(call, route.format, this.now(), this.deps.config.countryHeader), call.request.headers),
      settle: this.settlesOnce(),
    }
    try {
      // 1. The call: its body and the fields gw acts on.
      const read =
        route.body === 'multipart'
          ? await readMultipartCall(call.bodyBytes ?? new Uint8Array(), call.request.headers.get('content-type'))
          : readJsonCall(call.bodyText, 'defaultModel' in route ? route.defaultModel : undefined)
      state.facts = { ...state.facts, model: read.fields.model }
      state.facts.trace?.requested(read.fields)
      // Models think for longer than the server's idle timeout, whether they stream or not; the
      // upstream timeout, not the idle one, bounds the wait.
      call.keepAlive()

      // 2. How the call is served: a fallback chain's steps when its model is a chain's alias, else the
      // model alone; how often a step is tried again; what the caller asks of the response cache.
      const headers = call.request.headers
      const chain = await this.deps.chains.chainFor(state.facts.principal.orgId, read.fields.model)
      const plan = planFor(read.fields.model, chain, headers)
      if (chain) {
        state.facts = { ...state.facts, chainId: chain.id }
        // The alias is a model the rules may name too: denied, none of its steps is tried.
        await this.deps.access.require(state.facts.principal, [{ kind: 'model', id: chain.matchModel }])
      }
      const cacheAsk = route.answer === 'provider' && !read.multipart ? readCacheRequest(headers) : undefined

      // 3. The first step the caller's key may take: its provider, its keys, the most it can cost.
      const served: Serving = { call, read, plan, state }
      const first = await this.firstStep(served)
      state.facts = first.prepared.facts

      // 4. Whether the rate limits let it through, once for the call however many attempts it takes.
      const limit = await checkLimits(this.deps.limiter, state.facts)
      state.facts = { ...state.facts, limit }
      if (!limit.allowed) throw rateLimited(limit)

      // 5. An answer kept from an identical call, when the caller asks for one.
      if (cacheAsk) {
        served.cache = {
          ask: cacheAsk,
          key: cacheKey({ orgId: state.facts.principal.orgId, seed: cacheAsk.seed, path: call.path, body: read.body }),
        }
        if (cacheAsk.read) {
          const hit = await this.cachedAnswer(served.cache)
          state.facts = { ...state.facts, cacheStatus: hit ? 'HIT' : 'MISS' }
          if (hit) return await this.answerCached(served, hit)
        }
      }

      // 6. The provider, step by step and key by key until one serves; the answer relayed and settled.
      return await this.serve(served, first.index, first.prepared)
    } catch (error) {
      // A caller that left is the reason whatever broke next (the provider's read, the body's), and is recorded so.
      return this.answerFailure(state.facts, call.request.signal.aborted ? clientClosed() : error, state.settle)
    } finally {
      state.facts.timing.answered()
    }
  }

  /**
   * The first step of the plan the call can take. A step the caller's key may not reach, or that has no
   * key, is passed over (and said so in the attempts) when a later one can serve; alone, its refusal is the answer.
   */
  private async firstStep(served: Serving): Promise<{ index: number; prepared: Prepared }> {
    const { plan, state } = served
    for (let index = 0; ; index++) {
      const step = plan.steps[index] as ChainStep
      try {
        return { index, prepared: await this.prepareStep(served, step) }
      } catch (error) {
        if (index === plan.steps.length - 1 || !callerFacing(error)) throw error
        state.facts = { ...state.facts, attempts: [...(state.facts.attempts ?? []), skippedStep(step, error)] }
      }
    }
  }

  /** A step made ready: the facts of the call become the step's (its provider, model, price), keeping what the call learnt. */
  private async prepareStep(served: Serving, step: ChainStep): Promise<Prepared> {
    const { call, read, state } = served
    const known: CallFacts = { ...state.facts, downgradedFrom: undefined, hold: undefined }
    const requested = step.provider ? `${step.provider}/${step.model}` : step.model
    return this.prepare(call, read, known, requested, step)
  }

  /**
   * Serves the call from step `index` on. Each attempt holds the call's worst case against its budgets
   * (a hold a failed attempt lets go), runs on a key picked by weight among those not cooling down,
   * and counts as served once a byte is ready for the caller. A failure that another key or a retry
   * may get past is tried again; one the plan's triggers name moves on to the next step; any other,
   * or the last step's, is the caller's answer, with every attempt in the metadata.
   */
  private async serve(served: Serving, index: number, prepared: Prepared): Promise<Response> {
    const { call, plan, state } = served
    const route = DISPATCH_ROUTES[call.path]
    let last: Unserved | undefined
    for (let at = index; at < plan.steps.length; at++) {
      const step = plan.steps[at] as ChainStep
      if (at > index) {
        try {
          prepared = await this.prepareStep(served, step)
        } catch (error) {
          if (!callerFacing(error)) throw error
          state.facts = { ...state.facts, attempts: [...(state.facts.attempts ?? []), skippedStep(step, error)] }
          continue
        }
      }
      const tried = new Set<string>()
      let retries = 0
      for (;;) {
        prepared = await this.admit(served, prepared)
        const { facts, provider, upstreamPath, outgoing, keys } = prepared
        // One key is tried whatever its health: asking would cost a lookup (a Redis round trip) for nothing.
        const cooling = keys.length > 1 ? await this.deps.keyHealth.coolingDown(keys.map((key) => key.id)) : NOTHING_COOLING
        const key = pickKey(keys, cooling, tried, this.random) ?? (keys[0] as KeyCandidate)
        tried.add(key.id)
        if (key.ptb) await this.credits.require(facts.principal.orgId)
        const upstream = provider.upstream(upstreamPath, key.credentials, call.request.headers)
        if (outgoing.contentType) upstream.headers.set('content-type', outgoing.contentType)
        const span = state.facts.trace?.attempt({ provider: provider.name, model: facts.model, url: upstream.url })
        span?.inject(upstream.headers)
        const startedAt = this.now()
        state.facts = { ...facts, ptb: key.ptb, dispatched: true }
        const result = await state.facts.timing.waitOn(
          attemptProvider(
            {
              url: upstream.url,
              headers: upstream.headers,
              body: outgoing.payload,
              clientSignal: call.request.signal,
              provider: provider.name,
              timeoutMs: step.timeoutMs ?? this.deps.config.upstreamTimeoutMs,
              guardedFetch: this.guardFor(key.credentials),
            },
            route.answer === 'raw' ? 'raw' : prepared.streams ? 'stream' : 'whole',
            this.now,
          ),
        )
        const attempt = { provider: provider.name, model: facts.model, latencyMs: this.now() - startedAt }
        if (result.ok) {
          if (cooling.has(key.id)) void this.deps.keyHealth.recovered(key.id).catch(() => undefined)
          const httpStatus = result.response.status
          span?.served(httpStatus)
          state.facts = { ...state.facts, attempts: [...(state.facts.attempts ?? []), { ...attempt, httpStatus }] }
          return await this.answerServed(served, prepared, result)
        }
        last = result
        const httpStatus = result.failure.kind === 'status' ? result.failure.status : undefined
        span?.failed(httpStatus, result.error.message)
        state.facts = {
          ...state.facts,
          hold: undefined,
          attempts: [
            ...(state.facts.attempts ?? []),
            { ...attempt, ...(httpStatus === undefined ? {} : { httpStatus }), error: result.error.message },
          ],
        }
        if (facts.hold) await this.releaseHold(facts)
        if (keyFailing(result.failure))
          void this.deps.keyHealth.coolDown(key.id, coolDownMs(result.failure)).catch(() => undefined)
        if (!retryable(result.failure)) break
        if (tried.size < KEYS_PER_TRY && keys.some((candidate) => !tried.has(candidate.id))) continue
        if (retries >= plan.retry.attempts) break
        const delay = retryDelayMs(plan.retry, retries + 1, result.failure)
        if (delay === undefined) break
        retries += 1
        tried.clear()
        await pause(delay, call.request.signal)
      }
      if (!fallsThrough(last.failure, plan.triggers)) break
    }
    if (!last) throw badRequest('no step of this fallback chain can serve the call')
    if (last.answer) return await this.answerProviderFailure(state.facts, last.answer, prepared.translation, state.settle)
    throw last.error
  }

  /**
   * Holds the attempt's worst case against the budgets. A budget may have the call served by a cheaper
   * model instead (once per call); the caller's key must reach that one too.
   */
  private async admit(served: Serving, prepared: Prepared): Promise<Prepared> {
    const { call, state } = served
    const priced = DISPATCH_ROUTES[call.path].priced
    // What the call learnt since the step was prepared (the limiter's verdict, the cache's, earlier attempts) stays.
    const { limit, cacheStatus, attempts } = state.facts
    const facts: CallFacts = { ...prepared.facts, limit, cacheStatus, attempts }
    let spend = await this.deps.budgets.reserve(spendCall(facts, priced), { mayDowngrade: !facts.downgradedFrom })
    let admitted: Prepared = { ...prepared, facts }
    if (spend.kind === 'downgrade') {
      admitted = await this.prepare(call, served.read, { ...facts, downgradedFrom: facts.model }, spend.toModel)
      spend = await this.deps.budgets.reserve(spendCall(admitted.facts, priced), { mayDowngrade: false })
    }
    const hold = spend.kind === 'held' ? spend.hold : undefined
    return { ...admitted, facts: { ...admitted.facts, hold } }
  }

  /** A failed attempt used nothing: its hold goes back to the budgets. */
  private async releaseHold(facts: CallFacts): Promise<void> {
    if (!facts.hold) return
    await this.deps.budgets
      .settle(facts.hold, { usd: 0, tokens: 0, requests: 0 })
      .catch((error: unknown) =>
        this.deps.log.error('budget release failed', { requestId: facts.requestId, error: String(error) }),
      )
  }

  /** The answer of the attempt that served: relayed as it comes (raw, a stream) or whole, and settled as it ends. */
  private async answerServed(served: Serving, prepared: Prepared, result: Served): Promise<Response> {
    const { call, state, cache } = served
    const route = DISPATCH_ROUTES[call.path]
    const { provider, translation, outgoing, units } = prepared
    const facts = state.facts
    if (result.read === 'raw') return this.answerRaw(facts, result.response, call.request.signal, state.settle, units?.unitsOf)
    if (result.read === 'whole') return this.answerWhole(facts, result.response, result.text, provider, translation, served)
    const kept = cache?.ask.save ? new StreamKeeper(MAX_CACHED_ANSWER_BYTES) : undefined
    const relayed = relayStream({
      upstream: result.response,
      reader: result.reader,
      first: result.first,
      provider,
      translation,
      protocol: route.stream,
      clientSignal: call.request.signal,
      metaFrame: facts.caller.metaFrame ?? (await this.orgWantsMetaFrame(facts.principal.orgId)),
      callerAskedForUsage: outgoing.callerAskedForUsage,
      now: this.now,
      startedAt: facts.startedAt,
      capture: facts.responseBody,
      keep: kept?.keep,
      finish: async (outcome) => {
        const meta = await state.settle(facts, outcome)
        const body = kept?.text()
        if (cache && outcome.status === 'success' && body !== undefined)
          this.keepAnswer(cache, meta, { status: outcome.httpStatus, contentType: SSE_TYPE, body, streamed: true })
        return meta
      },
    })
    passProviderHeaders(result.response.headers, relayed.headers, facts.callerFormat)
    return withGatewayHeaders(facts, 'success', relayed)
  }

  /**
   * What serving a call with a model takes: the provider that serves it, whether the caller's key may
   * reach it, whether the formats differ, the keys it may run on, and the most the call can cost.
   */
  private async prepare(
    call: GatewayCall,
    read: ReadCall,
    known: CallFacts,
    requested: string,
    step?: ChainStep,
  ): Promise<Prepared> {
    const route = DISPATCH_ROUTES[call.path]
    const { provider, model } = resolveModel(requested)
    let facts: CallFacts = { ...known, provider: provider.name, model }
    requireGatewayScope(facts.principal, { provider: provider.name, model })
    // Before anything is held or sent: a denied step is skipped like one the key may not reach.
    await this.deps.access.require(facts.principal, [
      { kind: 'provider', id: provider.name },
      { kind: 'model', id: model },
    ])
    const translation = translationBetween(facts.callerFormat, provider.format)
    facts = { ...facts, mode: translation ? 'translated' : 'passthrough' }
    const upstreamPath = upstreamPathFor(call.path, provider, translation)
    const outgoing = await outgoingBody(read, provider, model, translation)
    facts = { ...facts, translationWarning: outgoing.translationWarning }
    const keys = await keyCandidates(
      { operator: this.deps.config.providers, orgKeys: this.deps.orgKeys },
      facts.principal,
      provider,
      model,
      step?.providerKeyId,
    )
    const priced = await this.deps.prices.priceOf(facts.principal.orgId, provider.name, model)
    // Another step, or a downgrade, is prepared again: nothing of the first model's price may carry over.
    const unknownCost = {
      price: undefined,
      priceSource: undefined,
      unitPrice: undefined,
      estimatedCostNano: undefined,
      estimatedTokens: undefined,
    }
    facts = { ...facts, ptb: keys.every((key) => key.ptb), ...unknownCost, ...estimateCost(priced, outgoing, route.priced) }
    const units = unitMeasure('measure' in route ? route.measure : undefined, provider.name, model, read.body)
    if (units) facts = { ...facts, unitPrice: units.unitPrice, estimatedCostNano: unitEstimate(units), estimatedTokens: 0 }
    return { facts, provider, translation, upstreamPath, outgoing, keys, units, streams: read.fields.stream === true }
  }

  /**
   * A provider API without a model (files, batches): the same authentication, limits, record and Gw-*
   * headers as a model call, the bytes passed through both ways, on the organisation's own key only.
   */
  async passThrough(call: ProviderApiCall): Promise<Response> {
    const { api, request } = call
    const provider = PROVIDERS[api.provider]
    const url = new URL(request.url)
    let facts = openCall({ ...call, path: url.pathname }, provider.format, this.now(), this.deps.config.countryHeader)
    facts = this.traced({ ...facts, provider: provider.name, model: api.kind, unpriced: UNPRICED_APIS }, request.headers)
    const settleOnce = this.settlesOnce()
    try {
      requireProviderApiScope(facts.principal, provider.name)
      const credentials = await ownCredentials(
        this.deps.orgKeys,
        facts.principal,
        provider,
        this.deps.config.providers[provider.name],
      )
      const limit = await checkLimits(this.deps.limiter, facts)
      facts = { ...facts, limit }
      if (!limit.allowed) throw rateLimited(limit)
      const upstream = provider.upstream(url.pathname, credentials, request.headers)
      const contentType = request.headers.get('content-type')
      if (call.body && contentType) upstream.headers.set('content-type', contentType)
      else upstream.headers.delete('content-type')
      facts = { ...facts, dispatched: true }
      const span = facts.trace?.attempt({ provider: provider.name, model: api.kind, url: upstream.url })
      span?.inject(upstream.headers)
      const response = await facts.timing.waitOn(
        callProvider({
          method: api.method,
          url: `${upstream.url}${url.search}`,
          headers: upstream.headers,
          body: call.body,
          clientSignal: request.signal,
          provider: provider.name,
          timeoutMs: this.deps.config.upstreamTimeoutMs,
          guardedFetch: this.guardFor(credentials),
        }),
      )
      settledAttempt(span, response)
      if (!response.ok) {
        const failed = { response, ...(await readProviderFailure(response, provider.name)) }
        return await this.answerProviderFailure(facts, failed, undefined, settleOnce)
      }
      if (api.kind === 'message_batches' && isJson(response)) {
        // The SDKs fetch a batch's results from its results_url as it is: it must lead back through gw.
        const text = pointResultsAtGw(await response.text(), this.deps.config.publicUrl ?? url.origin)
        facts.responseBody.set(text)
        await settleOnce(facts, { status: 'success', httpStatus: response.status })
        const answer = jsonAnswer(text, response.status)
        passProviderHeaders(response.headers, answer.headers, facts.callerFormat)
        return withGatewayHeaders(facts, 'success', answer)
      }
      return this.answerRaw(facts, response, request.signal, settleOnce)
    } catch (error) {
      return this.answerFailure(facts, request.signal.aborted ? clientClosed() : error, settleOnce)
    } finally {
      facts.timing.answered()
    }
  }

  /** The egress policy's fetch for an organisation's own base URL; none for the operator's, which is trusted. */
  private guardFor(credentials: ProviderCredentials): UpstreamRequest['guardedFetch'] {
    return credentials.organizationBaseUrl ? this.deps.egress.guardedFetch : undefined
  }

  /** A call's facts with its span, when tracing is on. */
  private traced(facts: CallFacts, callerHeaders: Headers): CallFacts {
    const trace = this.deps.tracing?.call(callerHeaders, facts)
    return trace ? { ...facts, trace } : facts
  }

  /** One call's settlement: the first outcome is the call's; every later way out gets the same metadata back. */
  private settlesOnce(): Settle {
    let settled: Promise<GatewayMeta> | undefined
    return (known, outcome) => {
      settled ??= settle(this.settlement, known, outcome)
      return settled
    }
  }

  /** The provider's bytes as they come (audio, a file's content), settled when the last has gone out. */
  private answerRaw(
    facts: CallFacts,
    response: Response,
    clientSignal: AbortSignal,
    settleOnce: Settle,
    unitsOf?: (answerText: string) => number | undefined,
  ): Response {
    const relayed = relayRaw({
      upstream: response,
      clientSignal,
      unitsOf,
      now: this.now,
      startedAt: facts.startedAt,
      capture: facts.responseBody,
      finish: (outcome) => settleOnce(facts, outcome),
    })
    passProviderHeaders(response.headers, relayed.headers, facts.callerFormat)
    return withGatewayHeaders(facts, 'success', relayed)
  }

  /** When the organisation's setting cannot be read, the stream goes without the frame: the lookup still answers. */
  private orgWantsMetaFrame(orgId: string): Promise<boolean> {
    return this.deps.bodies.streamMetaFrame(orgId).catch(() => false)
  }

  /** A whole (non-streamed) answer: translated when the formats differ, settled, kept when asked, and sent with the served model. */
  private async answerWhole(
    facts: CallFacts,
    response: Response,
    text: string,
    provider: ProviderAdapter,
    translation: Translation | undefined,
    served: Serving,
  ): Promise<Response> {
    const payload = parseJson(text)
    const translated = translation?.response(payload)
    const out = translated ? JSON.stringify(translated.body) : text
    facts.responseBody.set(out)
    const meta = await served.state.settle(facts, {
      status: 'success',
      httpStatus: response.status,
      usage: provider.usageOf(payload),
      servedModel: provider.servedModel(payload),
      finishReasons: provider.finishReasons(payload),
      dropped: translated?.dropped,
    })
    if (served.cache)
      this.keepAnswer(served.cache, meta, { status: response.status, contentType: JSON_TYPE, body: out, streamed: false })
    const answer = jsonAnswer(out, response.status)
    passProviderHeaders(response.headers, answer.headers, facts.callerFormat)
    return withGatewayHeaders({ ...facts, model: meta.model, translationWarning: meta.translationWarning }, 'success', answer)
  }

  /**
   * A provider's 4xx/5xx: passed on with its status and the headers the caller's SDK acts on
   * (retry-after above all); in the caller's format, with the matching error type, when the formats differ.
   */
  private async answerProviderFailure(
    facts: CallFacts,
    failed: FailedAnswer,
    translation: Translation | undefined,
    settleOnce: Settle,
  ): Promise<Response> {
    const { response, text, failure } = failed
    await settleOnce(facts, { status: 'error', httpStatus: response.status, error: failure.message })
    const out = translation ? JSON.stringify(failureBody(facts.callerFormat, failure)) : text
    const answer = jsonAnswer(out, response.status)
    passProviderHeaders(response.headers, answer.headers, facts.callerFormat)
    return withGatewayHeaders(facts, 'error', answer)
  }

  /** The answers kept for a call; one of a full bucket, at random. The cache failing is a miss, never the caller's error. */
  private async cachedAnswer(cache: CacheUse): Promise<CachedAnswer | undefined> {
    const kept = await this.deps.cache.read(cache.key).catch((): CachedAnswer[] => [])
    if (kept.length === 0 || kept.length < cache.ask.bucketMax) return undefined
    return kept[Math.floor(this.random() * kept.length)]
  }

  /** Keeps a successful answer for later identical calls, off the answer's path: a cache that fails only misses. */
  private keepAnswer(
    cache: CacheUse,
    meta: GatewayMeta,
    answer: Pick<CachedAnswer, 'status' | 'contentType' | 'body' | 'streamed'>,
  ): void {
    if (!cache.ask.save || answer.status !== 200) return
    const costNano = meta.requestCost === undefined ? undefined : Math.round(meta.requestCost * NANO_PER_USD)
    const entry: CachedAnswer = { ...answer, provider: meta.provider, model: meta.model, costNano, storedAt: this.now() }
    void this.deps.cache.add(cache.key, entry, cache.ask.ttlMs, cache.ask.bucketMax).catch(() => undefined)
  }

  /**
   * An answer from the cache: the bytes the first caller was sent (a stream replayed as its events, in
   * the caller's format), costing nothing, recorded as cached with what it saved.
   */
  private async answerCached(served: Serving, hit: CachedAnswer): Promise<Response> {
    const { state } = served
    const facts: CallFacts = { ...state.facts, provider: hit.provider, model: hit.model, cacheHit: { savedNano: hit.costNano } }
    state.facts = facts
    facts.responseBody.set(hit.body)
    // A replayed stream's first token is as early as its first byte; a whole answer has none, as from a provider.
    const timeToFirstTokenMs = hit.streamed ? this.now() - facts.startedAt : undefined
    const meta = await state.settle(facts, { status: 'success', httpStatus: hit.status, timeToFirstTokenMs })
    if (!hit.streamed) return withGatewayHeaders(facts, 'success', jsonAnswer(hit.body, hit.status))
    const metaFrame = facts.caller.metaFrame ?? (await this.orgWantsMetaFrame(facts.principal.orgId))
    const frame = metaFrame ? `event: gw\ndata: ${JSON.stringify(meta)}\n\n` : ''
    const headers = { 'content-type': SSE_TYPE, 'cache-control': 'no-cache' }
    return withGatewayHeaders(facts, 'success', new Response(hit.body + frame, { status: hit.status, headers }))
  }

  /**
   * Anything thrown on the way, in the caller's format and with the Gw-* headers. The database being
   * away is the caller's 503 to retry; anything else unknown is our own fault, logged and never shown.
   */
  private async answerFailure(facts: CallFacts, error: unknown, settleOnce: Settle): Promise<Response> {
    const facing = callerFacing(error)
    if (!facing) this.deps.log.error('gateway failure', { requestId: facts.requestId, error: errorMessage(error) })
    const failure = facing ?? internalError()
    const out = JSON.stringify(errorBody(facts.callerFormat, failure))
    facts.responseBody.set(out)
    // The code leads the record's error, so `rate_limited` and the rest can be counted and filtered.
    await settleOnce(facts, { status: 'error', httpStatus: failure.status, error: `${failure.code}: ${failure.message}` })
    const retryAfter = failure.retryAfterSeconds
    return withGatewayHeaders(
      facts,
      'error',
      jsonAnswer(out, failure.status, retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) }),
    )
  }
}
