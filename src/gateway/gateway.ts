/**
 * The gateway's request path, top to bottom: `dispatch` reads as its steps, each a function of
 * `steps/` (or of `routing/` and `cache/`) that takes what it needs and hands back what it learnt.
 * The HTTP entry (entry.ts) has authenticated the caller and read the body; here the call is read,
 * its route planned (a fallback chain's steps, retries), its model resolved, its keys found, its cost
 * estimated, its limits checked, the response cache asked, the provider called attempt by attempt
 * (steps/attempts.ts: budgets held and credits checked for each), the answer relayed (steps/respond.ts,
 * translated when the formats differ), and the call settled (steps/settle.ts): priced, charged,
 * recorded, and its metadata kept.
 */
import type { Principal } from '../auth/principal'
import type { CallSettingsSource } from '../directory/call-settings'
import type { ChainSource } from '../directory/chains'
import type { OrgKeySource } from '../directory/connections'
import type { OperatorProviders } from '../directory/providers'
import type { EgressPolicy } from '../egress/policy'
import type { AccessPolicies } from '../governance/policies'
import type { LimitVerdict, RateLimiter } from '../limits/limiter'
import type { Logger } from '../log'
import type { PriceSource } from '../money/price-book'
import type { CallObserver } from '../observability/observer'
import type { AttemptTrace, Tracing } from '../observability/tracing'
import type { BudgetEnforcer } from '../spend/enforcer'
import type { Store } from '../store/store'
import type { ValueOrPromise } from '../util/value-or-promise'
import type { ResponseCache } from './cache/store'
import { CallCache } from './cache/use'
import { type CallFacts, CallState, type Dispatch, type GatewayCall, openCall, type Settlement } from './call'
import { DISPATCH_ROUTES, type DispatchRoute, type ProviderApi } from './dispatch-routes'
import type { MetaStore } from './meta/store'
import { ModelResolver, PROVIDERS } from './providers/registry'
import type { RequestLog } from './request-log/request-log'
import type { KeyHealth } from './routing/key-health'
import { planFor } from './routing/policy'
import { CreditBalances, checkLimits, rateLimited } from './steps/admission'
import { Attempts } from './steps/attempts'
import { ownCredentials, requireProviderApiScope } from './steps/credentials'
import { readGeminiCall, readJsonCall, readMultipartCall } from './steps/read-call'
import { Answers } from './steps/respond'
import { pointResultsAtGw } from './steps/results-url'
import { type SettlementDeps, settle } from './steps/settle'
import { callProvider, clientClosed, readProviderFailure } from './steps/upstream'

export interface GatewayConfig {
  providers: OperatorProviders
  metaTtlSeconds: number
  /** How long to wait for a provider's response headers before answering 504. */
  upstreamTimeoutMs: number
  /** The request header a trusted proxy in front of gw sets to the caller's country (GW_COUNTRY_HEADER). */
  countryHeader?: string
  /** Where callers reach gw (GW_PUBLIC_URL), for links gw hands out; the address a call came to when absent. */
  publicUrl?: string
}

export interface GatewayDeps {
  config: GatewayConfig
  store: Store
  limiter: RateLimiter
  budgets: BudgetEnforcer
  prices: PriceSource
  orgKeys: OrgKeySource
  /** What the organisation's settings say of its calls (bodies kept, the closing frame of streams). */
  orgSettings: CallSettingsSource
  /** Calls' metadata shared with other instances (Redis); absent for a single instance. */
  meta?: MetaStore
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

/** A provider API call as the HTTP entry hands it over: authenticated, its body (if any) read as bytes. */
export interface ProviderApiCall {
  principal: Principal
  api: ProviderApi
  request: Request
  body?: Uint8Array
  /** What the request log keeps of the body: a note of its type and size. */
  bodyText: string
}

/** A pass-through's one attempt: its answer, whatever its status, is the call's. */
function settledAttempt(span: AttemptTrace | undefined, response: Response): void {
  if (!span) return
  if (response.ok) span.served(response.status)
  else span.failed(response.status, `the provider answered ${response.status}`)
}

/** The limiter's verdict on the call, kept for its Gw-RateLimit-* headers; a refusal is the caller's 429. */
function limited(state: CallState, limit: LimitVerdict): void {
  state.facts = { ...state.facts, limit }
  if (!limit.allowed) throw rateLimited(limit)
}

const isJson = (response: Response) => response.headers.get('content-type')?.includes('json') === true

const UNPRICED_APIS = "files and batches are billed by the provider to the organization's own key; gw does not price them"

export class Gateway {
  private readonly now: () => number
  private readonly settle: Settlement
  private readonly cache: CallCache
  private readonly answers: Answers
  private readonly attempts: Attempts

  constructor(private readonly deps: GatewayDeps) {
    const now = deps.now ?? Date.now
    const random = deps.random ?? Math.random
    const credits = new CreditBalances(deps.store, deps.requestLog, now)
    this.now = now
    const settlement: SettlementDeps = { ...deps, metaTtlSeconds: deps.config.metaTtlSeconds, credits, now }
    this.settle = (facts, outcome) => settle(settlement, facts, outcome)
    this.cache = new CallCache(deps.cache, random, now)
    this.answers = new Answers({
      streamMetaFrame: (orgId) => deps.orgSettings.streamMetaFrame(orgId),
      cache: this.cache,
      log: deps.log,
      now,
    })
    this.attempts = new Attempts({
      ...deps,
      prepare: { ...deps, providers: deps.config.providers, models: new ModelResolver(deps.config.providers, deps.orgKeys) },
      credits,
      answers: this.answers,
      upstreamTimeoutMs: deps.config.upstreamTimeoutMs,
      now,
      random,
    })
  }

  async dispatch(call: GatewayCall): Promise<Response> {
    const route: DispatchRoute = DISPATCH_ROUTES[call.path]
    // A path with the model in it (Gemini's) is recorded as it was called; the others are their route.
    const path = route.body === 'gemini' ? new URL(call.request.url).pathname : call.path
    const state = this.open(openCall({ ...call, path }, route.format, this.now(), this.deps.config.countryHeader), call.request)
    return this.answering(state, async () => {
      // 1. The call: its body and the fields gw acts on.
      const read =
        route.body === 'multipart'
          ? await readMultipartCall(call.bodyBytes ?? new Uint8Array(), call.request.headers.get('content-type'))
          : route.body === 'gemini'
            ? readGeminiCall(call.bodyText, path)
            : readJsonCall(call.bodyText, route.defaultModel)
      state.facts = { ...state.facts, model: read.fields.model }
      state.facts.trace?.requested(read.fields)
      // Models think for longer than the server's idle timeout, whether they stream or not; the
      // upstream timeout, not the idle one, bounds the wait.
      call.keepAlive()

      // 2. How the call is served: a fallback chain's steps when its model is a chain's alias, else the
      // model alone; how often a step is tried again; what the caller asks of the response cache.
      const found = this.deps.chains.chainFor(state.facts.principal.orgId, read.fields.model)
      const chain = found instanceof Promise ? await found : found
      const dispatch: Dispatch = { call, route, read, plan: planFor(read.fields.model, chain, call.request.headers), state }
      if (chain) {
        state.facts = { ...state.facts, chainId: chain.id }
        // The alias is a model the rules may name too: denied, none of its steps is tried.
        await this.deps.access.require(state.facts.principal, [{ kind: 'model', id: chain.matchModel }])
      }
      dispatch.cache = this.cache.use(dispatch)

      // 3. The first step the caller's key may take: its provider, its keys, the most it can cost.
      const first = await this.attempts.firstStep(dispatch)
      state.facts = first.prepared.facts

      // 4. Whether the rate limits let it through, once for the call however many attempts it takes.
      const limiting = this.checkLimits(state)
      if (limiting instanceof Promise) await limiting

      // 5. An answer kept from an identical call, when the caller asks for one.
      if (dispatch.cache?.ask.read) {
        const hit = await this.cache.lookup(dispatch.cache)
        state.facts = { ...state.facts, cacheStatus: hit ? 'HIT' : 'MISS' }
        if (hit) return await this.answers.cached(state, hit)
      }

      // 6. The provider, step by step and key by key until one serves; the answer relayed and settled.
      return await this.attempts.serve(dispatch, first.index, first.prepared)
    })
  }

  /**
   * A provider API without a model (files, batches): the same authentication, limits, record and Gw-*
   * headers as a model call, the bytes passed through both ways, on the organisation's own key only.
   */
  async passThrough(call: ProviderApiCall): Promise<Response> {
    const { api, request } = call
    const provider = PROVIDERS[api.provider]
    const url = new URL(request.url)
    // The caller speaks the provider's own API: its answers and errors come back in that format.
    const opened = openCall({ ...call, path: url.pathname }, api.provider, this.now(), this.deps.config.countryHeader)
    const state = this.open({ ...opened, provider: provider.name, model: api.kind, unpriced: UNPRICED_APIS }, request)
    return this.answering(state, async () => {
      requireProviderApiScope(state.facts.principal, provider.name)
      const operator = this.deps.config.providers[api.provider]
      const credentials = await ownCredentials(this.deps.orgKeys, state.facts.principal, provider, operator)
      const limiting = this.checkLimits(state)
      if (limiting instanceof Promise) await limiting
      const upstream = await provider.upstream({
        path: url.pathname,
        model: api.kind,
        stream: false,
        credentials,
        callerHeaders: request.headers,
        body: call.body,
        fetch: this.attempts.sideFetch(credentials),
      })
      const contentType = request.headers.get('content-type')
      if (call.body && contentType) upstream.headers.set('content-type', contentType)
      else upstream.headers.delete('content-type')
      state.facts = { ...state.facts, dispatched: true }
      const span = state.facts.trace?.attempt({ provider: provider.name, model: api.kind, url: upstream.url })
      span?.inject(upstream.headers)
      const response = await state.facts.timing.waitOn(
        callProvider({
          method: api.method,
          url: `${upstream.url}${url.search}`,
          headers: upstream.headers,
          body: call.body,
          clientSignal: request.signal,
          provider: provider.name,
          timeoutMs: this.deps.config.upstreamTimeoutMs,
          guardedFetch: this.attempts.guardFor(credentials),
        }),
      )
      settledAttempt(span, response)
      if (!response.ok) {
        const failed = { response, ...(await readProviderFailure(response, provider.name)) }
        return await this.answers.providerFailure(state, failed, true)
      }
      // The SDKs fetch a batch's results from its results_url as it is: it must lead back through gw.
      if (api.kind === 'message_batches' && isJson(response))
        return await this.answers.passed(
          state,
          response,
          pointResultsAtGw(await response.text(), this.deps.config.publicUrl ?? url.origin),
        )
      return this.answers.raw(state, response)
    })
  }

  /** A call's state: its facts, with its span when tracing is on, and its one settlement. */
  private open(facts: CallFacts, request: Request): CallState {
    const trace = this.deps.tracing?.call(request.headers, facts)
    return new CallState(trace ? { ...facts, trace } : facts, request.signal, this.settle)
  }

  /**
   * What every call runs in: its steps, and anything they throw answered in the caller's format. A
   * caller that left is the reason whatever broke next (the provider's read, the body's), and is recorded so.
   */
  private async answering(state: CallState, steps: () => Promise<Response>): Promise<Response> {
    try {
      return await steps()
    } catch (error) {
      return this.answers.failure(state, state.signal.aborted ? clientClosed() : error)
    } finally {
      state.facts.timing.answered()
    }
  }

  /** Both rate-limit layers, once for the call however many attempts it takes: at once when the limiter decides in process. */
  private checkLimits(state: CallState): ValueOrPromise<void> {
    const verdict = checkLimits(this.deps.limiter, state.facts)
    return verdict instanceof Promise ? verdict.then((limit) => limited(state, limit)) : limited(state, verdict)
  }
}
