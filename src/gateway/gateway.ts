/**
 * The gateway's request path, top to bottom: read the call, pick the provider and the mode, check
 * credits, call the provider, relay its answer (translated when the formats differ), and on the way
 * out price it, charge it, and leave its metadata and its record.
 */
import type { Principal } from '../auth/principal'
import { requireGatewayScope } from '../auth/scopes'
import { ApiError, badRequest, callerFacing, forbidden, internalError } from '../errors'
import { errorBody, errorFamily } from '../http/error-mapper'
import type { LimitVerdict, RateLimiter } from '../limits/limiter'
import type { Logger } from '../log'
import { costNano, estimateNano, nanoToUsd, priceFor } from '../money/cost'
import type { ModelPrice } from '../money/prices'
import { totalTokens, type Usage } from '../money/usage'
import { errorMessage } from '../store/faults'
import type { RequestRecord } from '../store/repositories/requests'
import type { Store } from '../store/store'
import { headerValue } from '../util/header-value'
import { TtlCache } from '../util/ttl-cache'
import { BodyCapture, type BodyPolicy, type BodyPolicySource } from './body-capture'
import { type CallFields, readCallFields } from './call-fields'
import type { GatewayMeta, MetaStore } from './meta/store'
import {
  asRecord,
  type OrgKeySource,
  type ProviderAdapter,
  type ProviderCredentials,
  type ProviderName,
  parseJson,
  type WireFormat,
} from './providers/provider'
import { resolveModel } from './providers/registry'
import { newRequestId } from './request-id'
import type { RequestLog } from './request-log'
import { relayStream, type StreamOutcome } from './stream-relay'
import { type Translation, translationBetween } from './translations'

export interface GatewayConfig {
  providers: Record<ProviderName, ProviderCredentials>
  metaTtlSeconds: number
  /** How long to wait for a provider's response headers before answering 504. */
  upstreamTimeoutMs: number
  /** The request header a trusted proxy in front of gw sets to the caller's country (GW_COUNTRY_HEADER). */
  countryHeader?: string
}

export interface GatewayDeps {
  config: GatewayConfig
  store: Store
  limiter: RateLimiter
  orgKeys: OrgKeySource
  bodies: BodyPolicySource
  meta: MetaStore
  requestLog: RequestLog
  log: Logger
  now?: () => number
}

export interface GatewayCall {
  principal: Principal
  path: string
  request: Request
  /** The body as sent; parsed here so that even a malformed one is answered with the Gw-* headers. */
  bodyText: string
  /** Lifts the server's idle timeout for this request (long streams are quiet between tokens). */
  keepAlive(): void
}

/** Everything known about one call as it goes; what the headers, the meta and the record are made of. */
interface CallState {
  requestId: string
  startedAt: number
  principal: Principal
  path: string
  callerFormat: WireFormat
  provider: string
  model: string
  mode: 'passthrough' | 'translated'
  translationWarning?: string
  price?: ModelPrice
  estimatedCostNano?: number
  ptb: boolean
  /** True once the provider was called: a call refused before that has no cost to report. */
  dispatched: boolean
  /** The caller's headers: Gw-User-Id and Gw-Session-Id go into the record. */
  callerHeaders: Headers
  /** The caller's `Gw-Property-*` headers, read once: the limiter and the record both use them. */
  properties: Record<string, string>
  /** The rate limiter's verdict, once asked: its figures go out in the Gw-RateLimit-* headers. */
  limit?: LimitVerdict
  requestBody: BodyCapture
  /** What the caller was answered, as far as it was kept; filled as the answer goes out. */
  responseBody: BodyCapture
  /**
   * The call's one settlement (record, charge, metadata), once begun: every later way out of the call
   * gets the same one, so a request id is recorded once, however its answer goes wrong.
   */
  settled?: Promise<GatewayMeta>
}

const USER_HEADER = 'gw-user-id'
const SESSION_HEADER = 'gw-session-id'
const PROPERTY_PREFIX = 'gw-property-'
const POLICY_HEADER = 'gw-ratelimit-policy'
/** Two letters, or a proxy's two-character code for unknown or anonymised callers (XX, T1). */
const COUNTRY_CODE = /^[A-Z][A-Z0-9]$/
/** Credit balances are read this fresh; a few calls may pass on a balance that just ran out (it may go negative). */
const BALANCE_TTL_MS = 1_000

/** `Gw-Property-<Name>` headers, by lower-cased name (header names are case-insensitive). */
function callerProperties(headers: Headers): Record<string, string> {
  const properties: Record<string, string> = {}
  headers.forEach((value, name) => {
    if (name.startsWith(PROPERTY_PREFIX)) properties[name.slice(PROPERTY_PREFIX.length)] = value
  })
  return properties
}

/** Why a record has no cost: absent is not zero, and the reader should know which it is. */
function costNote(state: CallState, usage: Usage | undefined): string | null {
  if (!state.dispatched) return 'not dispatched'
  if (state.price === undefined) return `no price known for ${state.provider} model ${state.model}`
  if (usage === undefined) return 'the provider reported no usage'
  return null
}

export class Gateway {
  private readonly now: () => number
  private readonly balances: TtlCache<string, number>

  constructor(private readonly deps: GatewayDeps) {
    this.now = deps.now ?? Date.now
    this.balances = new TtlCache(100_000, BALANCE_TTL_MS, this.now)
    // The writer takes the charges; the balances it leaves are the freshest there are.
    deps.requestLog.onSettled((balances) => {
      for (const [orgId, balance] of balances) this.balances.set(orgId, balance)
    })
  }

  async dispatch(call: GatewayCall): Promise<Response> {
    const callerFormat: WireFormat = errorFamily(call.path) === 'anthropic' ? 'anthropic' : 'openai'
    const body = asRecord(parseJson(call.bodyText))
    const state: CallState = {
      requestId: newRequestId(),
      startedAt: this.now(),
      principal: call.principal,
      path: call.path,
      callerFormat,
      provider: 'gw',
      // Replaced by the requested model once it is known to be one a record and a header can hold.
      model: 'unknown',
      mode: 'passthrough',
      ptb: false,
      dispatched: false,
      callerHeaders: call.request.headers,
      properties: callerProperties(call.request.headers),
      requestBody: BodyCapture.of(call.bodyText),
      responseBody: new BodyCapture(),
    }
    try {
      if (!body) throw badRequest('the request body must be a JSON object')
      const fields = readCallFields(body)
      state.model = fields.model
      return await this.serve(call, body, fields, state)
    } catch (error) {
      // The database being away is the caller's 503 to retry; anything else unknown is our own fault.
      const facing = callerFacing(error)
      if (!facing) this.deps.log.error('gateway failure', { requestId: state.requestId, error: errorMessage(error) })
      const failure = facing ?? internalError()
      const out = JSON.stringify(errorBody(errorFamily(call.path), failure))
      state.responseBody.set(out)
      // The code leads the record's error, so `rate_limited` and the rest can be counted and filtered.
      await this.finish(state, { status: 'error', httpStatus: failure.status, error: `${failure.code}: ${failure.message}` })
      const headers: Record<string, string> = { 'content-type': 'application/json' }
      if (failure.retryAfterSeconds !== undefined) headers['retry-after'] = String(failure.retryAfterSeconds)
      return this.respond(state, 'error', new Response(out, { status: failure.status, headers }))
    }
  }

  private async serve(call: GatewayCall, body: Record<string, unknown>, fields: CallFields, state: CallState): Promise<Response> {
    // Models think for longer than the server's idle timeout, whether they stream or not; the
    // upstream timeout, not the idle one, bounds the wait.
    call.keepAlive()
    // 1. The provider that serves the model, and whether the formats differ.
    const { provider, model } = resolveModel(fields.model)
    state.provider = provider.name
    state.model = model
    requireGatewayScope(state.principal, { provider: provider.name, model })
    const translation = translationBetween(state.callerFormat, provider.format)
    state.mode = translation ? 'translated' : 'passthrough'
    const upstreamPath = this.upstreamPath(call.path, provider, translation)

    // 2. The body in the provider's format; what could not be carried over is named. A body that needs no
    // change is sent as the caller wrote it: serialising a long prompt again would cost time for nothing.
    let upstreamBody: Record<string, unknown> = fields.model === model ? body : { ...body, model }
    if (translation) {
      const translated = translation.request(upstreamBody)
      upstreamBody = { ...translated.request, model }
      if (translated.dropped.length > 0) state.translationWarning = `dropped: ${translated.dropped.join(', ')}`
    }
    const streaming = fields.stream
    const usageRequest = provider.requestUsageInStream(upstreamBody)
    upstreamBody = usageRequest.body

    // 3. Whose credentials: the organisation's own (BYOK), else the operator's (pass-through billed).
    const credentials = await this.credentialsFor(state, provider)
    const serialized = upstreamBody === body ? call.bodyText : JSON.stringify(upstreamBody)
    state.price = priceFor(provider.name, model)
    if (state.price) {
      // A translation may set the provider's required output bound; the caller's own is checked already.
      const translatedMax = upstreamBody.max_tokens
      state.estimatedCostNano = estimateNano(state.price, {
        bodyBytes: Buffer.byteLength(serialized),
        maxOutputTokens: fields.maxOutputTokens ?? (typeof translatedMax === 'number' ? translatedMax : undefined),
      })
    }
    await this.checkLimits(state)
    if (state.ptb) await this.checkCredits(state)

    // 4. The provider.
    const upstream = provider.upstream(upstreamPath, credentials, call.request.headers)
    state.dispatched = true
    const response = await this.callUpstream(upstream.url, upstream.headers, serialized, call.request.signal, provider.name)
    if (!response.ok) return this.upstreamFailure(state, response, translation)

    // 5. The answer, streamed or whole.
    if (streaming) {
      const relayed = relayStream({
        upstream: response,
        provider,
        translation,
        // Translated, the caller's own stream_options say whether it wants OpenAI's usage chunk.
        callerAskedForUsage: translation
          ? asRecord(body.stream_options)?.include_usage === true
          : usageRequest.callerAskedForUsage,
        now: this.now,
        startedAt: state.startedAt,
        capture: state.responseBody,
        finish: (outcome) => this.finish(state, outcome),
      })
      return this.respond(state, 'success', relayed)
    }
    const text = await response.text()
    const payload = parseJson(text)
    const out = translation ? JSON.stringify(translation.response(payload)) : text
    state.responseBody.set(out)
    const meta = await this.finish(state, {
      status: 'success',
      httpStatus: response.status,
      usage: provider.usageOf(payload),
      servedModel: provider.servedModel(payload),
    })
    state.model = meta.model
    return this.respond(
      state,
      'success',
      new Response(out, { status: response.status, headers: { 'content-type': 'application/json' } }),
    )
  }

  private upstreamPath(path: string, provider: ProviderAdapter, translation: Translation | undefined): string {
    if (!translation) {
      if (!provider.paths.includes(path)) {
        throw badRequest(`${path} is not served by provider ${provider.name}; it serves ${provider.paths.join(', ')}`)
      }
      return path
    }
    if (path !== '/v1/chat/completions' && path !== '/v1/messages') {
      throw badRequest(
        `${path} cannot be translated for provider ${provider.name}; only chat (/v1/chat/completions, /v1/messages) can`,
      )
    }
    return provider.chatPath
  }

  /**
   * A proxy key uses the one provider key it is bound to; other callers use their organisation's newest
   * key for the provider; only without one does the operator's key serve, and then the call is billed
   * to the organisation's credits (PTB).
   */
  private async credentialsFor(state: CallState, provider: ProviderAdapter): Promise<ProviderCredentials> {
    const operator = this.deps.config.providers[provider.name]
    const { principal } = state
    const own = principal.boundProviderKeyId
      ? await this.deps.orgKeys.byId(principal.orgId, principal.boundProviderKeyId)
      : await this.deps.orgKeys.newestFor(principal.orgId, provider.name)
    if (principal.boundProviderKeyId && own?.provider !== provider.name) {
      throw forbidden(
        `this proxy key reaches only provider ${own?.provider ?? 'none'}; model ${state.model} is served by ${provider.name}`,
      )
    }
    if (own) return { apiKey: own.apiKey, baseUrl: own.baseUrl ?? operator.baseUrl }
    if (!operator.apiKey && provider.requiresKey(operator)) {
      throw badRequest(
        `no key is configured for provider ${provider.name}: add one with POST /v1/api-keys/provider-key, or the operator sets ${provider.name.toUpperCase()}_API_KEY`,
      )
    }
    state.ptb = true
    return operator
  }

  /** Both rate-limit layers (spec 8); a refusal is a 429 with Retry-After, before any provider call. */
  private async checkLimits(state: CallState): Promise<void> {
    const headers = state.callerHeaders
    state.limit = await this.deps.limiter.check({
      orgId: state.principal.orgId,
      userId: headers.get(USER_HEADER) ?? undefined,
      properties: state.properties,
      model: state.model,
      policyHeader: headers.get(POLICY_HEADER) ?? undefined,
      estimateCents: state.estimatedCostNano === undefined ? undefined : state.estimatedCostNano / 1e7,
    })
    if (!state.limit.allowed) {
      throw new ApiError(
        'rate_limited',
        `rate limit exceeded: ${state.limit.reason}; retry in ${state.limit.retryAfterSeconds} s`,
      )
    }
  }

  private async checkCredits(state: CallState): Promise<void> {
    if ((await this.creditBalance(state.principal.orgId)) <= 0) {
      throw new ApiError(
        'payment_required',
        "this organization has no credits left for calls on the operator's provider keys; add credits (gw credits add)",
      )
    }
  }

  /**
   * An organisation's credits (nano-USD) as this instance knows them: the stored balance, read at most
   * once a second or handed over by the request log's writer, less what its queued records will take.
   */
  private async creditBalance(orgId: string): Promise<number> {
    let stored = this.balances.get(orgId)
    if (stored === undefined) {
      stored = (await this.deps.store.organizations.get(orgId))?.creditBalanceNano ?? 0
      this.balances.set(orgId, stored)
    }
    return stored - this.deps.requestLog.unwrittenDebit(orgId)
  }

  private async callUpstream(
    url: string,
    headers: Headers,
    body: string,
    clientSignal: AbortSignal,
    provider: string,
  ): Promise<Response> {
    const abort = new AbortController()
    const onClientGone = () => abort.abort(new Error('client disconnected'))
    clientSignal.addEventListener('abort', onClientGone, { once: true })
    const timer = setTimeout(() => abort.abort(new Error('timeout')), this.deps.config.upstreamTimeoutMs)
    try {
      // decompress is left on and the encoding headers are not passed on: Bun hands us decoded bytes.
      return await fetch(url, { method: 'POST', headers, body, signal: abort.signal })
    } catch (error) {
      if (abort.signal.aborted && String(abort.signal.reason).includes('timeout')) {
        throw new ApiError(
          'upstream_timeout',
          `provider ${provider} did not answer within ${this.deps.config.upstreamTimeoutMs} ms`,
        )
      }
      if (clientSignal.aborted) throw new ApiError('bad_request', 'the client went away before the provider answered')
      throw new ApiError('upstream_unreachable', `provider ${provider} could not be reached: ${(error as Error).message}`)
    } finally {
      clearTimeout(timer)
    }
  }

  /** A provider's 4xx/5xx: passed on with its status; in the caller's format when the formats differ. */
  private async upstreamFailure(state: CallState, response: Response, translation: Translation | undefined): Promise<Response> {
    const text = await response.text()
    const message = asRecord(asRecord(parseJson(text))?.error)?.message
    const description = typeof message === 'string' ? message : `provider ${state.provider} answered ${response.status}`
    await this.finish(state, { status: 'error', httpStatus: response.status, error: description })
    const out = translation
      ? JSON.stringify(
          errorBody(errorFamily(state.path), new ApiError('upstream_error', description, undefined, response.status)),
        )
      : text
    return this.respond(
      state,
      'error',
      new Response(out, { status: response.status, headers: { 'content-type': 'application/json' } }),
    )
  }

  /** Settles the call once: the first outcome is the call's; a later one gets the same metadata back. */
  private finish(state: CallState, outcome: StreamOutcome): Promise<GatewayMeta> {
    state.settled ??= this.settle(state, outcome)
    return state.settled
  }

  /**
   * Prices and records a finished call, and returns its metadata (spec 2.1). A pass-through-billed
   * call's charge is taken with its record, by the request log's writer; the balance reported here
   * already counts it.
   */
  private async settle(state: CallState, outcome: StreamOutcome): Promise<GatewayMeta> {
    const { principal } = state
    const cost = state.price && outcome.usage ? costNano(state.price, outcome.usage) : undefined
    if (state.limit && cost !== undefined && cost > 0) {
      const verdict = state.limit
      await this.deps.limiter
        .charge(verdict, cost)
        .catch((error: unknown) =>
          this.deps.log.error('rate-limit charge failed', { requestId: state.requestId, error: String(error) }),
        )
    }
    const model = outcome.servedModel ?? state.model
    // When the policy cannot be read, keep no body: storing what may have been forbidden is the worse mistake.
    const policy = await this.deps.bodies.bodyPolicy(principal.orgId).catch((): BodyPolicy => ({ store: false, redact: true }))
    // The writer scans the request body and applies the policy, off the answer's path.
    this.deps.requestLog.record({
      record: this.record(state, outcome, model, cost),
      bodies: { request: state.requestBody, response: state.responseBody, policy },
    })
    const creditsRemaining =
      state.ptb && cost !== undefined && cost > 0 ? nanoToUsd(await this.creditBalance(principal.orgId)) : undefined
    const meta: GatewayMeta = {
      requestId: state.requestId,
      provider: state.provider,
      model,
      status: outcome.status,
      ...(cost !== undefined ? { requestCost: nanoToUsd(cost) } : {}),
      ...(state.estimatedCostNano !== undefined ? { estimatedCost: nanoToUsd(state.estimatedCostNano) } : {}),
      ...(creditsRemaining !== undefined ? { creditsRemaining } : {}),
      gatewayMode: state.mode,
      ...(state.translationWarning ? { translationWarning: state.translationWarning } : {}),
    }
    await this.deps.meta.put({ orgId: principal.orgId, meta }, this.deps.config.metaTtlSeconds).catch((error: unknown) =>
      this.deps.log.warn('metadata not stored; the lookup will answer pending', {
        requestId: state.requestId,
        error: String(error),
      }),
    )
    if (this.deps.log.debugging)
      this.deps.log.debug('gateway request', {
        requestId: state.requestId,
        orgId: principal.orgId,
        provider: state.provider,
        model,
        status: outcome.status,
        httpStatus: outcome.httpStatus,
        ptb: state.ptb,
      })
    return meta
  }

  private record(state: CallState, outcome: StreamOutcome, model: string, cost: number | undefined): RequestRecord {
    const { principal, callerHeaders } = state
    const { properties } = state
    const usage = outcome.usage
    return {
      id: state.requestId,
      orgId: principal.orgId,
      apiKeyId: principal.apiKeyId ?? null,
      userId: callerHeaders.get(USER_HEADER),
      sessionId: callerHeaders.get(SESSION_HEADER),
      properties: Object.keys(properties).length > 0 ? properties : null,
      provider: state.provider,
      model,
      path: state.path,
      gatewayMode: state.mode,
      translationWarning: state.translationWarning ?? null,
      status: outcome.status,
      httpStatus: outcome.httpStatus,
      latencyMs: this.now() - state.startedAt,
      timeToFirstTokenMs: outcome.timeToFirstTokenMs ?? null,
      promptTokens: usage?.promptTokens ?? null,
      completionTokens: usage?.completionTokens ?? null,
      cacheReadTokens: usage?.cacheReadTokens ?? null,
      cacheWriteTokens: usage?.cacheWriteTokens ?? null,
      totalTokens: usage ? totalTokens(usage) : null,
      costNano: cost ?? null,
      costNote: cost !== undefined ? null : costNote(state, usage),
      estimatedCostNano: state.estimatedCostNano ?? null,
      ptb: state.ptb,
      error: outcome.error ?? null,
      country: this.countryOf(callerHeaders),
      createdAt: new Date(state.startedAt),
    }
  }

  /** An ISO 3166-1 alpha-2 code from the trusted proxy's header; anything else is unknown, not guessed. */
  private countryOf(headers: Headers): string | null {
    const header = this.deps.config.countryHeader
    const value = header ? headers.get(header)?.trim().toUpperCase() : undefined
    return value && COUNTRY_CODE.test(value) ? value : null
  }

  /**
   * The Gw-* headers (spec 4.3) on every gateway answer, errors included. Values that come from the
   * caller or the provider (the model, the names in a warning, a policy) go through `headerValue`, so
   * setting them cannot throw.
   */
  private respond(state: CallState, status: 'success' | 'error', response: Response): Response {
    const headers = response.headers
    headers.set('Gw-Id', state.requestId)
    headers.set('Gw-Provider', state.provider)
    headers.set('Gw-Model', headerValue(state.model))
    headers.set('Gw-Status', status)
    headers.set('Gw-Gateway-Mode', state.mode)
    if (state.translationWarning) headers.set('Gw-Translation-Warning', headerValue(state.translationWarning))
    if (state.limit) {
      headers.set('Gw-RateLimit-Limit', String(state.limit.limit))
      headers.set('Gw-RateLimit-Remaining', String(state.limit.remaining))
      headers.set('Gw-RateLimit-Policy', headerValue(state.limit.policy))
      if (!state.limit.allowed) headers.set('Retry-After', String(state.limit.retryAfterSeconds))
    }
    return response
  }
}
