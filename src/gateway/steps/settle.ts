import type { BodyPolicy, BodyPolicySource } from '../../directory/call-settings'
import { isProviderName } from '../../directory/providers'
import type { RateLimiter } from '../../limits/limiter'
import type { Logger } from '../../log'
import { costNano } from '../../money/cost'
import type { PricedModel, PriceSource } from '../../money/price-book'
import { unitsCostNano } from '../../money/unit-prices'
import { totalTokens, type Usage } from '../../money/usage'
import type { CallObserver } from '../../observability/observer'
import type { BudgetEnforcer, Used } from '../../spend/enforcer'
import type { RequestRecord } from '../../store/repositories/requests'
import type { ValueOrPromise } from '../../util/value-or-promise'
import type { CallFacts } from '../call'
import { metaOfRecord } from '../meta/of-record'
import type { GatewayMeta, MetaStore } from '../meta/store'
import type { RequestLog } from '../request-log/request-log'
import { warningWith } from '../translate/pairs'
import type { CreditBalances } from './admission'
import type { StreamOutcome } from './relay'

export interface SettlementDeps {
  limiter: RateLimiter
  budgets: BudgetEnforcer
  /** The organisation's policy for the bodies its records keep. */
  orgSettings: BodyPolicySource
  requestLog: RequestLog
  /** Shared with other instances (Redis); absent, the lookup reads the record from the request log. */
  meta?: MetaStore
  metaTtlSeconds: number
  credits: CreditBalances
  prices: PriceSource
  log: Logger
  now: () => number
  /** Told of each settled call (Prometheus metrics); absent when metrics are off. */
  observer?: CallObserver
}

/** Why a record has no cost: absent is not zero, and the reader should know which it is. */
function costNote(facts: CallFacts, usage: Usage | undefined): string | null {
  if (!facts.dispatched) return 'not dispatched'
  if (facts.unpriced) return facts.unpriced
  if (facts.unitPrice)
    return `${facts.model} is billed by the ${facts.unitPrice.unit}, and the answer did not say how many (a transcription says its duration with response_format verbose_json)`
  if (facts.price === undefined) return `no price known for ${facts.provider} model ${facts.model}`
  if (usage === undefined) return 'the provider reported no usage'
  return null
}

/**
 * What a call used, for its budgets. What the provider charged, when known; a call refused before it was
 * sent, or that the provider failed, used nothing; a call that went out and whose use is not known (a
 * client that left mid-stream before any usage was reported) is counted at its worst case, since the
 * provider may well have charged that much.
 */
function usedBy(facts: CallFacts, outcome: StreamOutcome, cost: number | undefined): Used {
  const answered = facts.dispatched && (outcome.status === 'success' || outcome.httpStatus === 499)
  const worst = (known: number | undefined, estimate: number | undefined) => known ?? (answered ? (estimate ?? 0) : 0)
  return {
    usd: worst(cost, facts.estimatedCostNano),
    tokens: worst(outcome.usage ? totalTokens(outcome.usage) : undefined, facts.estimatedTokens),
    requests: facts.dispatched && outcome.status === 'success' ? 1 : 0,
  }
}

/** The request log's record of a finished call. */
function callRecord(
  facts: CallFacts,
  outcome: StreamOutcome,
  model: string,
  cost: number | undefined,
  endedAt: number,
  creditsLeft: number | undefined,
): RequestRecord {
  const { principal, caller } = facts
  const usage = outcome.usage
  return {
    id: facts.requestId,
    orgId: principal.orgId,
    apiKeyId: principal.apiKeyId ?? null,
    userId: caller.userId,
    sessionId: caller.sessionId,
    customerId: caller.customerId,
    stripeCustomerId: caller.stripeCustomerId,
    memberId: principal.memberId ?? null,
    properties: Object.keys(caller.properties).length > 0 ? caller.properties : null,
    provider: facts.provider,
    model,
    path: facts.path,
    gatewayMode: facts.mode,
    translationWarning: facts.translationWarning ?? null,
    status: outcome.status,
    httpStatus: outcome.httpStatus,
    latencyMs: endedAt - facts.startedAt,
    timeToFirstTokenMs: outcome.timeToFirstTokenMs ?? null,
    promptTokens: usage?.promptTokens ?? null,
    completionTokens: usage?.completionTokens ?? null,
    cacheReadTokens: usage?.cacheReadTokens ?? null,
    cacheWriteTokens: usage?.cacheWriteTokens ?? null,
    totalTokens: usage ? totalTokens(usage) : null,
    costNano: cost ?? null,
    costNote: cost !== undefined ? null : costNote(facts, usage),
    priceSource: cost !== undefined && !facts.unitPrice ? (facts.priceSource ?? null) : null,
    estimatedCostNano: facts.estimatedCostNano ?? null,
    ptb: facts.ptb,
    error: outcome.error ?? null,
    country: caller.country,
    attempts: facts.attempts?.length ? [...facts.attempts] : null,
    cached: facts.cacheHit !== undefined,
    fallbackChainId: facts.chainId ?? null,
    cacheSavedNano: facts.cacheHit?.savedNano ?? null,
    downgradedFrom: facts.downgradedFrom ?? null,
    creditsRemainingNano: creditsLeft ?? null,
    createdAt: new Date(facts.startedAt),
  }
}

/**
 * The price of the model that served, when the one called has none: a call to a name the price table
 * cannot know (an Azure deployment, an alias of an organisation's) is billed at the model its provider
 * says answered it, `gpt-4o-2024-08-06` behind a deployment named `prod`. A call with a price keeps it:
 * that is the price its limits and budgets were estimated with.
 */
function pricedByServedModel(prices: PriceSource, outcome: StreamOutcome, facts: CallFacts): ValueOrPromise<CallFacts> {
  const served = outcome.servedModel
  if (facts.price || facts.unitPrice || facts.cacheHit || !outcome.usage || !served || served === facts.model) return facts
  if (!isProviderName(facts.provider)) return facts
  const withPrice = (priced: PricedModel | undefined): CallFacts =>
    priced ? { ...facts, price: priced.price, priceSource: priced.source } : facts
  const pricing = prices.priceOf(facts.principal.orgId, facts.provider, served)
  return pricing instanceof Promise ? pricing.then(withPrice, () => facts) : withPrice(pricing)
}

/** When the policy cannot be read, keep no body: storing what may have been forbidden is the worse mistake. */
const NO_BODIES: BodyPolicy = { store: false, redact: true }

/**
 * Settles a finished call: prices it, charges its cost to the limiter's cents buckets, hands its record
 * to the request log, and stores and returns its metadata (spec 2.1). A pass-through-billed call's
 * charge is taken with its record, by the request log's writer; the balance reported here already
 * counts it.
 */
export async function settle(deps: SettlementDeps, known: CallFacts, outcome: StreamOutcome): Promise<GatewayMeta> {
  // What the answer held that could not be translated is named with what the request held.
  const withDropped = outcome.dropped?.length
    ? { ...known, translationWarning: warningWith(known.translationWarning, outcome.dropped) }
    : known
  const pricing = pricedByServedModel(deps.prices, outcome, withDropped)
  const facts = pricing instanceof Promise ? await pricing : pricing
  const { principal } = facts
  // A cached answer called no provider: it costs nothing, and what it saved is recorded beside it.
  const cost = facts.cacheHit
    ? 0
    : facts.unitPrice
      ? outcome.units === undefined
        ? undefined
        : unitsCostNano(facts.unitPrice, outcome.units)
      : facts.price && outcome.usage
        ? costNano(facts.price, outcome.usage)
        : undefined
  // Only cents buckets take a call's cost; a call that passed none has nothing to charge.
  if (facts.limit?.centsBuckets.length && cost !== undefined && cost > 0) {
    await deps.limiter
      .charge(facts.limit, cost)
      .catch((error: unknown) => deps.log.error('rate-limit charge failed', { requestId: facts.requestId, error: String(error) }))
  }
  if (facts.hold) {
    await deps.budgets
      .settle(facts.hold, usedBy(facts, outcome, cost))
      .catch((error: unknown) => deps.log.error('budget settlement failed', { requestId: facts.requestId, error: String(error) }))
  }
  const model = outcome.servedModel ?? facts.model
  const reading = deps.orgSettings.bodyPolicy(principal.orgId)
  const policy = reading instanceof Promise ? await reading.catch(() => NO_BODIES) : reading
  const endedAt = deps.now()
  deps.observer?.settled(facts, outcome, cost, endedAt)
  facts.trace?.end(facts, outcome, cost, {
    policy,
    request: () => facts.requestBody.text(),
    response: () => facts.responseBody.text(),
  })
  // Read before the record is queued, which takes the call's cost from what the balance reads.
  const billed = facts.ptb && cost !== undefined && cost > 0 ? cost : 0
  const balance = billed > 0 ? deps.credits.balance(principal.orgId) : undefined
  const creditsLeft = balance === undefined ? undefined : (balance instanceof Promise ? await balance : balance) - billed
  const record = callRecord(facts, outcome, model, cost, endedAt, creditsLeft)
  // The writer scans the request body and applies the policy, off the answer's path.
  deps.requestLog.record({ record, bodies: { request: facts.requestBody, response: facts.responseBody, policy } })
  // From the record, as the lookup reads it from the log: the same by construction.
  const stored = metaOfRecord(record)
  if (deps.meta) {
    try {
      await deps.meta.put(stored, deps.metaTtlSeconds)
    } catch (error) {
      deps.log.warn('metadata not shared; other instances answer its lookup once its record is written', {
        requestId: facts.requestId,
        error: String(error),
      })
    }
  }
  if (deps.log.debugging)
    deps.log.debug('gateway request', {
      requestId: facts.requestId,
      orgId: principal.orgId,
      provider: facts.provider,
      model,
      status: outcome.status,
      httpStatus: outcome.httpStatus,
      ptb: facts.ptb,
    })
  return stored.meta
}
