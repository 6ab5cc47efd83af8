import { errorBody } from '../../error-answers'
import { callerFacing, internalError } from '../../errors'
import type { Logger } from '../../log'
import { errorMessage } from '../../store/faults'
import { headerValue } from '../../util/header-value'
import type { ValueOrPromise } from '../../util/value-or-promise'
import { StreamKeeper } from '../cache/keeper'
import { type CachedAnswer, MAX_CACHED_ANSWER_BYTES } from '../cache/store'
import type { CallCache } from '../cache/use'
import type { CallFacts, CallState, Dispatch } from '../call'
import { parseJson } from '../providers/provider'
import { failureBody } from '../translate/errors'
import type { Prepared } from './prepare'
import { relayRaw, relayStream } from './relay'
import { type FailedAnswer, passProviderHeaders, type Served } from './upstream'

/**
 * The Gw-* headers (spec 4.3) on every gateway answer, errors included. Values that come from the
 * caller or the provider (the model, the names in a warning, a policy) go through `headerValue`, so
 * setting them cannot throw. `served` names the model that answered and what its answer could not carry,
 * when they differ from what the call was sent with.
 */
export function withGatewayHeaders(
  facts: CallFacts,
  status: 'success' | 'error',
  response: Response,
  served: Pick<CallFacts, 'model' | 'translationWarning'> = facts,
): Response {
  const headers = response.headers
  headers.set('Gw-Id', facts.requestId)
  headers.set('Gw-Provider', facts.provider)
  headers.set('Gw-Model', headerValue(served.model))
  headers.set('Gw-Status', status)
  headers.set('Gw-Gateway-Mode', facts.mode)
  if (served.translationWarning) headers.set('Gw-Translation-Warning', headerValue(served.translationWarning))
  if (facts.downgradedFrom) headers.set('Gw-Downgraded-From', headerValue(facts.downgradedFrom))
  if (facts.cacheStatus) headers.set('Gw-Cache', facts.cacheStatus)
  if (facts.attempts?.length) headers.set('Gw-Attempts', String(facts.attempts.length))
  const { limit } = facts
  if (limit) {
    headers.set('Gw-RateLimit-Limit', String(limit.limit))
    headers.set('Gw-RateLimit-Remaining', String(limit.remaining))
    headers.set('Gw-RateLimit-Policy', headerValue(limit.policy))
    if (!limit.allowed) headers.set('Retry-After', String(limit.retryAfterSeconds))
  }
  return response
}

const JSON_TYPE = 'application/json'
const JSON_HEADERS = { 'content-type': JSON_TYPE } as const

/** A JSON answer of the gateway's own (a whole provider answer, or an error in the caller's format). */
export const jsonAnswer = (text: string, status: number, extraHeaders?: Record<string, string>): Response =>
  new Response(text, { status, headers: extraHeaders ? { ...JSON_HEADERS, ...extraHeaders } : JSON_HEADERS })
const SSE_TYPE = 'text/event-stream; charset=utf-8'

export interface AnswerDeps {
  /** Whether the organisation's streams end with the `gw` frame when a call does not ask for it. */
  streamMetaFrame(orgId: string): ValueOrPromise<boolean>
  cache: CallCache
  log: Logger
  now: () => number
}

/**
 * Every way a gateway call is answered: the provider's answer relayed (raw, streamed or whole), its
 * failure passed on, an answer replayed from the cache, or gw's own refusal, each settled once and sent
 * with the Gw-* headers.
 */
export class Answers {
  constructor(private readonly deps: AnswerDeps) {}

  /** The answer of the attempt that served: relayed as it comes (raw, a stream) or whole, and settled as it ends. */
  async served(dispatch: Dispatch, prepared: Prepared, result: Served): Promise<Response> {
    const { call, route, state, cache } = dispatch
    const { family, translation, outgoing, units } = prepared
    const facts = state.facts
    if (result.read === 'raw') return this.raw(state, result.response, units?.unitsOf)
    if (result.read === 'whole') return this.whole(dispatch, prepared, result.response, result.text)
    const kept = cache?.ask.save ? new StreamKeeper(MAX_CACHED_ANSWER_BYTES) : undefined
    const frame = this.metaFrame(facts)
    const relayed = relayStream({
      upstream: result.response,
      reader: result.reader,
      first: result.first,
      family,
      translation,
      model: facts.model,
      protocol: route.stream,
      clientSignal: call.request.signal,
      metaFrame: frame instanceof Promise ? await frame : frame,
      callerAskedForUsage: outgoing.callerAskedForUsage,
      now: this.deps.now,
      startedAt: facts.startedAt,
      capture: facts.responseBody,
      keep: kept?.keep,
      finish: async (outcome) => {
        const meta = await state.settle(facts, outcome)
        const body = kept?.text()
        if (cache && outcome.status === 'success' && body !== undefined)
          this.deps.cache.keep(cache, meta, { status: outcome.httpStatus, contentType: SSE_TYPE, body, streamed: true })
        return meta
      },
    })
    passProviderHeaders(result.response.headers, relayed.headers, facts.callerFormat)
    return withGatewayHeaders(facts, 'success', relayed)
  }

  /** The provider's bytes as they come (audio, a file's content), settled when the last has gone out. */
  raw(state: CallState, response: Response, unitsOf?: (answerText: string) => number | undefined): Response {
    const facts = state.facts
    const relayed = relayRaw({
      upstream: response,
      clientSignal: state.signal,
      unitsOf,
      now: this.deps.now,
      startedAt: facts.startedAt,
      capture: facts.responseBody,
      finish: (outcome) => state.settle(facts, outcome),
    })
    passProviderHeaders(response.headers, relayed.headers, facts.callerFormat)
    return withGatewayHeaders(facts, 'success', relayed)
  }

  /** A JSON answer passed on whole, as the provider's other APIs give it (a batch), settled first. */
  async passed(state: CallState, response: Response, text: string): Promise<Response> {
    const facts = state.facts
    facts.responseBody.set(text)
    await state.settle(facts, { status: 'success', httpStatus: response.status })
    const answer = jsonAnswer(text, response.status)
    passProviderHeaders(response.headers, answer.headers, facts.callerFormat)
    return withGatewayHeaders(facts, 'success', answer)
  }

  /** A whole (non-streamed) answer: translated when the formats differ, settled, kept when asked, and sent with the served model. */
  private async whole(dispatch: Dispatch, prepared: Prepared, response: Response, text: string): Promise<Response> {
    const { state, cache } = dispatch
    const { family, translation } = prepared
    const facts = state.facts
    const payload = parseJson(text)
    const translated = translation?.response(payload, facts.model)
    const out = translated ? JSON.stringify(translated.body) : text
    facts.responseBody.set(out)
    const meta = await state.settle(facts, {
      status: 'success',
      httpStatus: response.status,
      usage: family.usageOf(payload),
      servedModel: family.servedModel(payload),
      finishReasons: family.finishReasons(payload),
      dropped: translated?.dropped,
    })
    if (cache) this.deps.cache.keep(cache, meta, { status: response.status, contentType: JSON_TYPE, body: out, streamed: false })
    const answer = jsonAnswer(out, response.status)
    passProviderHeaders(response.headers, answer.headers, facts.callerFormat)
    return withGatewayHeaders(facts, 'success', answer, meta)
  }

  /**
   * A provider's 4xx/5xx: passed on with its status and the headers the caller's SDK acts on
   * (retry-after above all); rewritten in the caller's format, with the matching error type, when the
   * provider's is another (`inOwnFormat` false: translated, or the provider's errors are its own).
   */
  async providerFailure(state: CallState, failed: FailedAnswer, inOwnFormat: boolean): Promise<Response> {
    const { response, text, failure } = failed
    const facts = state.facts
    await state.settle(facts, { status: 'error', httpStatus: response.status, error: failure.message })
    const out = inOwnFormat ? text : JSON.stringify(failureBody(facts.callerFormat, failure))
    const answer = jsonAnswer(out, response.status)
    passProviderHeaders(response.headers, answer.headers, facts.callerFormat)
    // A wait said only in the body (Google's) reaches the caller where every SDK looks for it.
    if (failure.retryAfterMs !== undefined && !answer.headers.has('retry-after'))
      answer.headers.set('retry-after', String(Math.ceil(failure.retryAfterMs / 1000)))
    return withGatewayHeaders(facts, 'error', answer)
  }

  /**
   * An answer from the cache: the bytes the first caller was sent (a stream replayed as its events, in
   * the caller's format), costing nothing, recorded as cached with what it saved.
   */
  async cached(state: CallState, hit: CachedAnswer): Promise<Response> {
    const facts: CallFacts = { ...state.facts, provider: hit.provider, model: hit.model, cacheHit: { savedNano: hit.costNano } }
    state.facts = facts
    facts.responseBody.set(hit.body)
    // A replayed stream's first token is as early as its first byte; a whole answer has none, as from a provider.
    const timeToFirstTokenMs = hit.streamed ? this.deps.now() - facts.startedAt : undefined
    const meta = await state.settle(facts, { status: 'success', httpStatus: hit.status, timeToFirstTokenMs })
    if (!hit.streamed) return withGatewayHeaders(facts, 'success', jsonAnswer(hit.body, hit.status))
    const frame = (await this.metaFrame(facts)) ? `event: gw\ndata: ${JSON.stringify(meta)}\n\n` : ''
    const headers = { 'content-type': SSE_TYPE, 'cache-control': 'no-cache' }
    return withGatewayHeaders(facts, 'success', new Response(hit.body + frame, { status: hit.status, headers }))
  }

  /**
   * Anything thrown on the way, in the caller's format and with the Gw-* headers. The database being
   * away is the caller's 503 to retry; anything else unknown is our own fault, logged and never shown.
   */
  async failure(state: CallState, error: unknown): Promise<Response> {
    const facts = state.facts
    const facing = callerFacing(error)
    if (!facing) this.deps.log.error('gateway failure', { requestId: facts.requestId, error: errorMessage(error) })
    const failure = facing ?? internalError()
    const out = JSON.stringify(errorBody(facts.callerFormat, failure))
    facts.responseBody.set(out)
    // The code leads the record's error, so `rate_limited` and the rest can be counted and filtered.
    await state.settle(facts, { status: 'error', httpStatus: failure.status, error: `${failure.code}: ${failure.message}` })
    const retryAfter = failure.retryAfterSeconds
    return withGatewayHeaders(
      facts,
      'error',
      jsonAnswer(out, failure.status, retryAfter === undefined ? undefined : { 'retry-after': String(retryAfter) }),
    )
  }

  /**
   * Whether a stream ends with the `gw` frame: the caller's ask, else its organisation's setting. When
   * the setting cannot be read, the stream goes without the frame: the lookup still answers.
   */
  private metaFrame(facts: CallFacts): ValueOrPromise<boolean> {
    if (facts.caller.metaFrame !== undefined) return facts.caller.metaFrame
    const setting = this.deps.streamMetaFrame(facts.principal.orgId)
    return setting instanceof Promise ? setting.catch(() => false) : setting
  }
}
