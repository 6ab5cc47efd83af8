import type { ProviderCredentials } from '../../directory/providers'
import type { EgressPolicy } from '../../egress/policy'
import { badRequest, callerFacing } from '../../errors'
import type { Logger } from '../../log'
import type { BudgetEnforcer } from '../../spend/enforcer'
import type { ChainStep } from '../../store/json-columns'
import type { CallFacts, Dispatch } from '../call'
import type { UpstreamCall } from '../providers/provider'
import type { KeyHealth } from '../routing/key-health'
import { pickKey } from '../routing/pick-key'
import { coolDownMs, fallsThrough, keyFailing, pause, retryable, retryDelayMs, skippedStep } from '../routing/policy'
import { type CreditBalances, spendCall } from './admission'
import type { KeyCandidate } from './credentials'
import { type PrepareDeps, type Prepared, prepareModel, prepareStep } from './prepare'
import type { Answers } from './respond'
import { type AttemptResult, attemptProvider, type Unserved, type UpstreamRequest } from './upstream'

export interface AttemptDeps {
  prepare: PrepareDeps
  budgets: BudgetEnforcer
  keyHealth: KeyHealth
  credits: CreditBalances
  /** Checks the addresses organisations configure (a provider key's base URL) when a call connects. */
  egress: Pick<EgressPolicy, 'guardedFetch'>
  answers: Answers
  /** How long to wait for a provider's response headers, unless a chain's step says otherwise. */
  upstreamTimeoutMs: number
  log: Logger
  now: () => number
  random: () => number
}

/**
 * The connection's own name for a model (an Azure deployment, a Bedrock inference profile), when it
 * has one; the record and the metadata keep the caller's. Own keys only: `constructor` is no alias.
 */
const providerModel = ({ models }: ProviderCredentials, model: string): string =>
  (models && Object.hasOwn(models, model) ? models[model] : undefined) ?? model

/**
 * The most keys one try of a step goes through before it waits for a retry or moves on: enough to get
 * past a key that is limited or failing, not so many that an organisation with dozens of keys turns
 * one call into dozens.
 */
const KEYS_PER_TRY = 3
const NOTHING_COOLING: ReadonlySet<string> = new Set()

/**
 * The provider calls of a dispatch: the plan's steps in order, each tried key by key and again as the
 * plan's retries allow, until one serves or none can.
 */
export class Attempts {
  constructor(private readonly deps: AttemptDeps) {}

  /**
   * The first step of the plan the call can take. A step the caller's key may not reach, or that has no
   * key, is passed over (and said so in the attempts) when a later one can serve; alone, its refusal is the answer.
   */
  async firstStep(dispatch: Dispatch): Promise<{ index: number; prepared: Prepared }> {
    const { plan, state } = dispatch
    for (let index = 0; ; index++) {
      const step = plan.steps[index] as ChainStep
      try {
        return { index, prepared: await prepareStep(this.deps.prepare, dispatch, step) }
      } catch (error) {
        if (index === plan.steps.length - 1 || !callerFacing(error)) throw error
        state.attempted(skippedStep(step, error))
      }
    }
  }

  /**
   * Serves the call from step `index` on. Each attempt holds the call's worst case against its budgets
   * (a hold a failed attempt lets go), runs on a key picked by weight among those not cooling down,
   * and counts as served once a byte is ready for the caller. A failure that another key or a retry
   * may get past is tried again; one the plan's triggers name moves on to the next step; any other,
   * or the last step's, is the caller's answer, with every attempt in the metadata.
   */
  async serve(dispatch: Dispatch, index: number, prepared: Prepared): Promise<Response> {
    const { call, plan, state } = dispatch
    const { deps } = this
    let last: Unserved | undefined
    for (let at = index; at < plan.steps.length; at++) {
      const step = plan.steps[at] as ChainStep
      if (at > index) {
        try {
          prepared = await prepareStep(deps.prepare, dispatch, step)
        } catch (error) {
          if (!callerFacing(error)) throw error
          state.attempted(skippedStep(step, error))
          continue
        }
      }
      const tried = new Set<string>()
      let retries = 0
      for (;;) {
        prepared = await this.admit(dispatch, prepared)
        const { keys } = prepared
        // One key is tried whatever its health: asking would cost a lookup (a Redis round trip) for nothing.
        const cooling = keys.length > 1 ? await deps.keyHealth.coolingDown(keys.map((key) => key.id)) : NOTHING_COOLING
        const key = pickKey(keys, cooling, tried, deps.random) ?? (keys[0] as KeyCandidate)
        tried.add(key.id)
        const result = await this.attempt(dispatch, step, prepared, key)
        if (result.ok) {
          if (cooling.has(key.id)) void deps.keyHealth.recovered(key.id).catch(() => undefined)
          return await deps.answers.served(dispatch, prepared, result)
        }
        last = result
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
    if (last.answer) {
      const inOwnFormat = prepared.translation === undefined && !prepared.family.foreignErrors
      return await deps.answers.providerFailure(state, last.answer, inOwnFormat)
    }
    throw last.error
  }

  /**
   * One call to the provider on one key, and what it leaves in the call's facts: the attempt in the
   * metadata, its span's end, and for a failure, the hold let go and the key cooled down when the
   * failure is the key's. Whether to try again is the caller's decision.
   */
  private async attempt(dispatch: Dispatch, step: ChainStep, prepared: Prepared, key: KeyCandidate): Promise<AttemptResult> {
    const { call, route, state } = dispatch
    const { deps } = this
    const { facts, provider, upstreamPath, outgoing } = prepared
    if (key.ptb) {
      const paying = deps.credits.require(facts.principal.orgId)
      if (paying instanceof Promise) await paying
    }
    const upstream = await provider.upstream({
      path: upstreamPath,
      model: providerModel(key.credentials, facts.model),
      stream: prepared.streams,
      credentials: key.credentials,
      callerHeaders: call.request.headers,
      body: outgoing.payload,
      fetch: this.sideFetch(key.credentials),
    })
    if (outgoing.contentType) upstream.headers.set('content-type', outgoing.contentType)
    const span = state.facts.trace?.attempt({ provider: provider.name, model: facts.model, url: upstream.url })
    span?.inject(upstream.headers)
    const startedAt = deps.now()
    state.facts = { ...facts, ptb: key.ptb, dispatched: true }
    const result = await state.facts.timing.waitOn(
      attemptProvider(
        {
          url: upstream.url,
          headers: upstream.headers,
          // A provider may send a body of its own making (Claude on Vertex: the model out, the version in).
          body: upstream.body ?? outgoing.payload,
          clientSignal: call.request.signal,
          provider: provider.name,
          timeoutMs: step.timeoutMs ?? deps.upstreamTimeoutMs,
          guardedFetch: this.guardFor(key.credentials),
        },
        route.answer === 'raw' ? 'raw' : prepared.streams ? 'stream' : 'whole',
        deps.now,
      ),
    )
    const latencyMs = deps.now() - startedAt
    if (result.ok) {
      const httpStatus = result.response.status
      span?.served(httpStatus)
      state.attempted({ provider: provider.name, model: facts.model, httpStatus, latencyMs })
      return result
    }
    const httpStatus = result.failure.kind === 'status' ? result.failure.status : undefined
    span?.failed(httpStatus, result.error.message)
    state.attempted(
      {
        provider: provider.name,
        model: facts.model,
        latencyMs,
        ...(httpStatus === undefined ? {} : { httpStatus }),
        error: result.error.message,
      },
      { hold: undefined },
    )
    if (facts.hold) await this.releaseHold(facts)
    if (httpStatus === 401) upstream.unauthorized?.()
    if (keyFailing(result.failure)) void deps.keyHealth.coolDown(key.id, coolDownMs(result.failure)).catch(() => undefined)
    return result
  }

  /** The egress policy's fetch for an organisation's own base URL; none for the operator's, which is trusted. */
  guardFor(credentials: ProviderCredentials): UpstreamRequest['guardedFetch'] {
    return credentials.organizationBaseUrl ? this.deps.egress.guardedFetch : undefined
  }

  /** How a provider's side requests go (a service account's token): held to the egress policy for an organisation's key. */
  sideFetch(credentials: ProviderCredentials): UpstreamCall['fetch'] {
    return credentials.organizationKey ? this.deps.egress.guardedFetch : fetch
  }

  /**
   * Holds the attempt's worst case against the budgets. A budget may have the call served by a cheaper
   * model instead (once per call); the caller's key must reach that one too.
   */
  private async admit(dispatch: Dispatch, prepared: Prepared): Promise<Prepared> {
    const { budgets } = this.deps
    const priced = dispatch.route.priced
    // What the call learnt since the step was prepared (the limiter's verdict, the cache's, earlier attempts) stays.
    const { limit, cacheStatus, attempts } = dispatch.state.facts
    const learnt = { limit, cacheStatus, attempts }
    const reserving = budgets.reserve(spendCall(prepared.facts, priced), { mayDowngrade: !prepared.facts.downgradedFrom })
    let spend = reserving instanceof Promise ? await reserving : reserving
    let admitted = prepared
    if (spend.kind === 'downgrade') {
      const downgrade = { ...learnt, downgradedFrom: prepared.facts.model }
      admitted = await prepareModel(this.deps.prepare, dispatch, prepared.facts, downgrade, spend.toModel)
      spend = await budgets.reserve(spendCall(admitted.facts, priced), { mayDowngrade: false })
    }
    const hold = spend.kind === 'held' ? spend.hold : undefined
    return { ...admitted, facts: { ...admitted.facts, ...learnt, hold } }
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
}
