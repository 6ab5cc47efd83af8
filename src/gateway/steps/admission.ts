import { ApiError } from '../../errors'
import type { LimitVerdict, RateLimiter } from '../../limits/limiter'
import { estimateNano, estimateTokens } from '../../money/cost'
import type { PricedModel } from '../../money/price-book'
import type { ModelPrice } from '../../money/prices'
import type { SpendCall } from '../../spend/enforcer'
import type { Store } from '../../store/store'
import { TtlCache } from '../../util/ttl-cache'
import type { ValueOrPromise } from '../../util/value-or-promise'
import type { CallFacts } from '../call'
import type { RequestLog } from '../request-log/request-log'

/**
 * The model's price, and the most the call can cost and be billed tokens for, known before it is sent
 * (see `estimateNano`); a call its provider does not charge for (counting tokens) costs nothing.
 */
export function estimateCost(
  priced: PricedModel | undefined,
  outgoing: { payload: string | Uint8Array; maxOutputTokens?: number },
  charged: boolean,
): { price?: ModelPrice; priceSource?: string; estimatedCostNano?: number; estimatedTokens?: number } {
  if (!charged) return priced ? { price: priced.price, priceSource: priced.source, estimatedTokens: 0 } : { estimatedTokens: 0 }
  const request = {
    bodyBytes: typeof outgoing.payload === 'string' ? Buffer.byteLength(outgoing.payload) : outgoing.payload.byteLength,
    maxOutputTokens: outgoing.maxOutputTokens,
  }
  if (!priced)
    return request.maxOutputTokens === undefined
      ? {}
      : { estimatedTokens: request.bodyBytes + Math.max(0, request.maxOutputTokens) }
  return {
    price: priced.price,
    priceSource: priced.source,
    estimatedCostNano: estimateNano(priced.price, request),
    estimatedTokens: estimateTokens(priced.price, request),
  }
}

/** What the spend controls are told of a call before it is sent: whose it is, and its worst case. */
export const spendCall = (facts: CallFacts, charged: boolean): SpendCall => ({
  requestId: facts.requestId,
  orgId: facts.principal.orgId,
  apiKeyId: facts.principal.apiKeyId,
  memberId: facts.principal.memberId,
  customerId: facts.caller.customerId ?? undefined,
  model: facts.model,
  provider: facts.provider,
  worst: charged ? { usd: facts.estimatedCostNano, tokens: facts.estimatedTokens } : { usd: 0, tokens: 0 },
})

/** Both rate-limit layers (spec 8), asked before any provider call; the verdict goes into the Gw-RateLimit-* headers. */
export function checkLimits(limiter: RateLimiter, facts: CallFacts): ValueOrPromise<LimitVerdict> {
  return limiter.check({
    orgId: facts.principal.orgId,
    userId: facts.caller.userId ?? undefined,
    properties: facts.caller.properties,
    model: facts.model,
    policyHeader: facts.caller.policy,
    estimateCents: facts.estimatedCostNano === undefined ? undefined : facts.estimatedCostNano / 1e7,
  })
}

/** A refusal by the limiter: a 429, whose Retry-After the Gw-* headers carry. */
export const rateLimited = (verdict: LimitVerdict) =>
  new ApiError('rate_limited', `rate limit exceeded: ${verdict.reason}; retry in ${verdict.retryAfterSeconds} s`)

/** Credit balances are read this fresh; a few calls may pass on a balance that just ran out (it may go negative). */
const BALANCE_TTL_MS = 1_000

/**
 * Organisations' credits (nano-USD) as this instance knows them: the stored balance, read at most
 * once a second or handed over by the request log's writer, less what its queued records will take.
 */
export class CreditBalances {
  private readonly balances: TtlCache<string, number | Promise<number>>

  constructor(
    private readonly store: Pick<Store, 'organizations'>,
    private readonly requestLog: RequestLog,
    now: () => number,
  ) {
    this.balances = new TtlCache(100_000, BALANCE_TTL_MS, now)
    // The writer takes the charges; the balances it leaves are the freshest there are.
    requestLog.onSettled((balances) => {
      for (const [orgId, balance] of balances) this.balances.set(orgId, balance)
    })
  }

  /** At once when the balance is held (the writer refreshes it with every batch it settles). */
  balance(orgId: string): ValueOrPromise<number> {
    const stored = this.balances.held(orgId, async () => (await this.store.organizations.get(orgId))?.creditBalanceNano ?? 0)
    return stored instanceof Promise
      ? stored.then((balance) => balance - this.requestLog.unwrittenDebit(orgId))
      : stored - this.requestLog.unwrittenDebit(orgId)
  }

  /** A call billed to the credits needs some left; the refusal is a 402. */
  require(orgId: string): ValueOrPromise<void> {
    const balance = this.balance(orgId)
    return balance instanceof Promise ? balance.then(requireCredits) : requireCredits(balance)
  }
}

function requireCredits(balance: number): void {
  if (balance <= 0) {
    throw new ApiError(
      'payment_required',
      "this organization has no credits left for calls on the operator's provider keys; add credits (gw credits add)",
    )
  }
}
