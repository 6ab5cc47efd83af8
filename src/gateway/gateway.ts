/**
 * The gateway's request path, top to bottom: `dispatch` reads as its steps, each a function of
 * `steps/` that takes what it needs and hands back what it learnt. The HTTP entry (entry.ts) has
 * authenticated the caller and read the body; here the call is read, its model resolved, its
 * credentials chosen, its cost estimated, its limits and credits checked, the provider called, the
 * answer relayed (translated when the formats differ), and the call settled: priced, charged,
 * recorded, and its metadata kept.
 */
import type { Principal } from '../auth/principal'
import { requireGatewayScope } from '../auth/scopes'
import { errorBody } from '../error-answers'
import { callerFacing, internalError } from '../errors'
import type { RateLimiter } from '../limits/limiter'
import type { Logger } from '../log'
import type { PriceSource } from '../money/price-book'
import type { BudgetEnforcer } from '../spend/enforcer'
import { errorMessage } from '../store/faults'
import type { Store } from '../store/store'
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
import { CreditBalances, checkLimits, estimateCost, rateLimited, spendCall } from './steps/admission'
import { chooseCredentials, ownCredentials, requireProviderApiScope } from './steps/credentials'
import { type ReadCall, readJsonCall, readMultipartCall } from './steps/read-call'
import { relayRaw, relayStream, type StreamOutcome } from './steps/relay'
import { jsonAnswer, withGatewayHeaders } from './steps/respond'
import { pointResultsAtGw } from './steps/results-url'
import { outgoingBody, upstreamPathFor } from './steps/route'
import { type SettlementDeps, settle } from './steps/settle'
import { unitEstimate, unitMeasure } from './steps/units'
import { callProvider, clientClosed, passProviderHeaders, readProviderFailure } from './steps/upstream'
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
  log: Logger
  now?: () => number
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
  credentials: Awaited<ReturnType<typeof chooseCredentials>>['credentials']
  units: ReturnType<typeof unitMeasure>
}

const isJson = (response: Response) => response.headers.get('content-type')?.includes('json') === true

const UNPRICED_APIS = "files and batches are billed by the provider to the organization's own key; gw does not price them"

export class Gateway {
  private readonly now: () => number
  private readonly credits: CreditBalances
  private readonly settlement: SettlementDeps

  constructor(private readonly deps: GatewayDeps) {
    this.now = deps.now ?? Date.now
    this.credits = new CreditBalances(deps.store, deps.requestLog, this.now)
    this.settlement = { ...deps, metaTtlSeconds: deps.config.metaTtlSeconds, credits: this.credits, now: this.now }
  }

  async dispatch(call: GatewayCall): Promise<Response> {
    const { config } = this.deps
    let facts = openCall(call, DISPATCH_ROUTES[call.path].format, this.now(), config.countryHeader)
    const settleOnce = this.settlesOnce()
    const route = DISPATCH_ROUTES[call.path]
    try {
      // 1. The call: its body and the fields gw acts on.
      const read =
        route.body === 'multipart'
          ? await readMultipartCall(call.bodyBytes ?? new Uint8Array(), call.request.headers.get('content-type'))
          : readJsonCall(call.bodyText, 'defaultModel' in route ? route.defaultModel : undefined)
      const { fields } = read
      facts = { ...facts, model: fields.model }
      // Models think for longer than the server's idle timeout, whether they stream or not; the
      // upstream timeout, not the idle one, bounds the wait.
      call.keepAlive()

      // 2-3. The provider that serves the model, whose key, and what the call may cost at most.
      let prepared = await this.prepare(call, read, facts, fields.model)
      facts = prepared.facts

      // 4. Whether the rate limits, the budgets and the credits let it through. A budget may have the
      // call served by a cheaper model instead; the caller's key must reach that one too.
      const limit = await checkLimits(this.deps.limiter, facts)
      facts = { ...facts, limit }
      if (!limit.allowed) throw rateLimited(limit)
      let spend = await this.deps.budgets.reserve(spendCall(facts, route.priced), { mayDowngrade: true })
      if (spend.kind === 'downgrade') {
        prepared = await this.prepare(call, read, { ...facts, downgradedFrom: facts.model }, spend.toModel)
        facts = prepared.facts
        spend = await this.deps.budgets.reserve(spendCall(facts, route.priced), { mayDowngrade: false })
      }
      if (spend.kind === 'held' && spend.hold) facts = { ...facts, hold: spend.hold }
      const { provider, translation, upstreamPath, outgoing, credentials, units } = prepared
      if (facts.ptb) await this.credits.require(facts.principal.orgId)

      // 5. The provider.
      const upstream = provider.upstream(upstreamPath, credentials, call.request.headers)
      if (outgoing.contentType) upstream.headers.set('content-type', outgoing.contentType)
      facts = { ...facts, dispatched: true }
      const response = await callProvider({
        url: upstream.url,
        headers: upstream.headers,
        body: outgoing.payload,
        clientSignal: call.request.signal,
        provider: provider.name,
        timeoutMs: config.upstreamTimeoutMs,
      })

      // 6. The answer, relayed with the provider's headers a caller's SDK acts on; the call is settled as it ends.
      if (!response.ok) return await this.answerProviderFailure(facts, response, translation, settleOnce)
      if (route.answer === 'raw') return this.answerRaw(facts, response, call.request.signal, settleOnce, units?.unitsOf)
      if (fields.stream) {
        const settledFacts = facts
        const relayed = relayStream({
          upstream: response,
          provider,
          translation,
          protocol: route.stream,
          clientSignal: call.request.signal,
          metaFrame: facts.caller.metaFrame ?? (await this.orgWantsMetaFrame(facts.principal.orgId)),
          callerAskedForUsage: outgoing.callerAskedForUsage,
          now: this.now,
          startedAt: facts.startedAt,
          capture: facts.responseBody,
          finish: (outcome) => settleOnce(settledFacts, outcome),
        })
        passProviderHeaders(response.headers, relayed.headers, facts.callerFormat)
        return withGatewayHeaders(facts, 'success', relayed)
      }
      return await this.answerWhole(facts, response, provider, translation, settleOnce)
    } catch (error) {
      // A caller that left is the reason whatever broke next (the provider's read, the body's), and is recorded so.
      return this.answerFailure(facts, call.request.signal.aborted ? clientClosed() : error, settleOnce)
    }
  }

  /**
   * What serving a call with a model takes: the provider that serves it, whether the caller's key may
   * reach it, whether the formats differ, whose provider key, and the most the call can cost.
   */
  private async prepare(call: GatewayCall, read: ReadCall, known: CallFacts, requested: string): Promise<Prepared> {
    const route = DISPATCH_ROUTES[call.path]
    const { provider, model } = resolveModel(requested)
    let facts: CallFacts = { ...known, provider: provider.name, model }
    requireGatewayScope(facts.principal, { provider: provider.name, model })
    const translation = translationBetween(facts.callerFormat, provider.format)
    facts = { ...facts, mode: translation ? 'translated' : 'passthrough' }
    const upstreamPath = upstreamPathFor(call.path, provider, translation)
    const outgoing = await outgoingBody(read, provider, model, translation)
    facts = { ...facts, translationWarning: outgoing.translationWarning }
    const { credentials, ptb } = await chooseCredentials(
      { operator: this.deps.config.providers, orgKeys: this.deps.orgKeys },
      facts.principal,
      provider,
      model,
    )
    const priced = await this.deps.prices.priceOf(facts.principal.orgId, provider.name, model)
    // A downgraded call is prepared again: nothing of the first model's price may carry over.
    const unknownCost = {
      price: undefined,
      priceSource: undefined,
      unitPrice: undefined,
      estimatedCostNano: undefined,
      estimatedTokens: undefined,
    }
    facts = { ...facts, ptb, ...unknownCost, ...estimateCost(priced, outgoing, route.priced) }
    const units = unitMeasure('measure' in route ? route.measure : undefined, provider.name, model, read.body)
    if (units) facts = { ...facts, unitPrice: units.unitPrice, estimatedCostNano: unitEstimate(units), estimatedTokens: 0 }
    return { facts, provider, translation, upstreamPath, outgoing, credentials, units }
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
    facts = { ...facts, provider: provider.name, model: api.kind, unpriced: UNPRICED_APIS }
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
      const response = await callProvider({
        method: api.method,
        url: `${upstream.url}${url.search}`,
        headers: upstream.headers,
        body: call.body,
        clientSignal: request.signal,
        provider: provider.name,
        timeoutMs: this.deps.config.upstreamTimeoutMs,
      })
      if (!response.ok) return await this.answerProviderFailure(facts, response, undefined, settleOnce)
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
    }
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

  /** A whole (non-streamed) answer: translated when the formats differ, settled, and sent with the served model. */
  private async answerWhole(
    facts: CallFacts,
    response: Response,
    provider: ProviderAdapter,
    translation: Translation | undefined,
    settleOnce: Settle,
  ): Promise<Response> {
    const text = await response.text()
    const payload = parseJson(text)
    const translated = translation?.response(payload)
    const out = translated ? JSON.stringify(translated.body) : text
    facts.responseBody.set(out)
    const meta = await settleOnce(facts, {
      status: 'success',
      httpStatus: response.status,
      usage: provider.usageOf(payload),
      servedModel: provider.servedModel(payload),
      dropped: translated?.dropped,
    })
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
    response: Response,
    translation: Translation | undefined,
    settleOnce: Settle,
  ): Promise<Response> {
    const { text, failure } = await readProviderFailure(response, facts.provider)
    await settleOnce(facts, { status: 'error', httpStatus: response.status, error: failure.message })
    const out = translation ? JSON.stringify(failureBody(facts.callerFormat, failure)) : text
    const answer = jsonAnswer(out, response.status)
    passProviderHeaders(response.headers, answer.headers, facts.callerFormat)
    return withGatewayHeaders(facts, 'error', answer)
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
