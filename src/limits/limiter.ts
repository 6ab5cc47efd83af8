import { badRequest } from '../errors'
import { remembered } from '../util/remembered'
import type { ValueOrPromise } from '../util/value-or-promise'
import type { Decision } from './algorithms'
import { formatPolicy, type Policy, parsePolicyHeader, type Segment } from './policy'
import type { Check, LimiterStore } from './store'

/** What the limiter needs to know about a gateway request. */
export interface LimitRequest {
  orgId: string
  userId?: string
  /** `Gw-Property-*` values, by lower-cased name. */
  properties: Record<string, string>
  model: string
  policyHeader?: string
  /** The worst-case cost, for cents buckets; absent when the model has no price. */
  estimateCents?: number
}

export interface LimitVerdict {
  allowed: boolean
  /** For the Gw-RateLimit-* headers: the tightest limit that applied. */
  limit: number
  remaining: number
  policy: string
  retryAfterSeconds: number
  /** Cents buckets to charge once the real cost is known. */
  centsBuckets: ReadonlyArray<{ key: string; limit: number; windowMs: number }>
  /** Which limit refused, for the 429 message and the record. */
  reason?: string
}

export interface RuleSource {
  rulesFor(orgId: string): ValueOrPromise<readonly Policy[]>
}

const CENTS_PER_USD = 100

/** What encodeURIComponent leaves as it is anyway: most model names, user ids and policies need no escaping. */
const PLAIN = /^[\w.!~*'()-]*$/
/** A deployment's model ids with a `:` (Bedrock's versions, Ollama's tags) are escaped once, not on every call. */
const escapedOnce = remembered(encodeURIComponent)
const escaped = (part: string) => (PLAIN.test(part) ? part : escapedOnce(part))

/**
 * Keys of one organisation share its hash tag, so one Lua script may touch them all on a cluster.
 * `kind` comes escaped: it is a segment name or a policy's cached escaped text.
 */
const keyOf = (orgId: string, layer: 'w' | 'b', kind: string, value: string) =>
  `gw:rl:{${orgId}}:${layer}:${kind}:${escaped(value)}`

/** A policy's normalized text, for the headers and messages, and the same escaped, for its keys. */
interface PolicyText {
  normalized: string
  keyPart: string
}
const policyText = (policy: Policy): PolicyText => {
  const normalized = formatPolicy(policy)
  return { normalized, keyPart: escaped(normalized) }
}

/** Headers repeat (a client sends the same policy on every call): parsed ones are kept, a bounded few. */
const PARSED_HEADERS_MAX = 1_000

interface Applied {
  check: Check
  policy: string
  describe: string
  cents: boolean
}

/**
 * Both layers of spec section 8: the global sliding window on every request (per organisation, and per
 * user and per model), then the token buckets of the `Gw-RateLimit-Policy` header or, without it, of
 * the organisation's rules. One store decision covers them all.
 */
export class RateLimiter {
  private readonly parsedHeaders = new Map<string, Policy>()
  private readonly texts = new WeakMap<Policy, PolicyText>()
  /** The layer-1 windows' policy and message per segment: the same for every request. */
  private readonly windowText: Record<'global' | 'user' | 'model', { policy: string; describe: string }>

  constructor(
    private readonly store: LimiterStore,
    private readonly global: { requests: number; windowSeconds: number },
    private readonly rules: RuleSource,
  ) {
    const { requests, windowSeconds } = global
    const text = (segment: Segment) => ({
      policy: `${requests};w=${windowSeconds};u=request;s=${segment}`,
      describe: `the ${segment === 'global' ? 'organization' : segment} limit of ${requests} requests per ${windowSeconds} s`,
    })
    this.windowText = { global: text('global'), user: text('user'), model: text('model') }
  }

  /**
   * The verdict on a request: at once when the buckets' policies are known (a header, or rules held)
   * and the store decides in process; a promise otherwise. A malformed policy header throws.
   */
  check(request: LimitRequest): ValueOrPromise<LimitVerdict> {
    const buckets = this.buckets(request)
    return buckets instanceof Promise ? buckets.then((known) => this.decide(request, known)) : this.decide(request, buckets)
  }

  private decide(request: LimitRequest, buckets: Applied[]): ValueOrPromise<LimitVerdict> {
    const applied = this.windows(request)
    for (const bucket of buckets) applied.push(bucket)
    const checks = new Array<Check>(applied.length)
    for (let i = 0; i < applied.length; i++) checks[i] = (applied[i] as Applied).check
    const decisions = this.store.decide(checks)
    return decisions instanceof Promise ? decisions.then((made) => verdictOf(applied, made)) : verdictOf(applied, decisions)
  }

  /** Takes a finished call's cost from the cents buckets it passed. */
  async charge(verdict: LimitVerdict, costNano: number): Promise<void> {
    const cents = (costNano / 1e9) * CENTS_PER_USD
    if (cents <= 0) return
    await Promise.all(verdict.centsBuckets.map((b) => this.store.charge(b.key, b.limit, b.windowMs, cents)))
  }

  private windows(request: LimitRequest): Applied[] {
    const applied = [this.window(request.orgId, 'global', '')]
    if (request.userId) applied.push(this.window(request.orgId, 'user', request.userId))
    applied.push(this.window(request.orgId, 'model', request.model))
    return applied
  }

  private window(orgId: string, segment: 'global' | 'user' | 'model', value: string): Applied {
    const { policy, describe } = this.windowText[segment]
    const { requests, windowSeconds } = this.global
    return {
      check: { kind: 'window', key: keyOf(orgId, 'w', segment, value), limit: requests, windowMs: windowSeconds * 1000 },
      policy,
      describe,
      cents: false,
    }
  }

  private buckets(request: LimitRequest): ValueOrPromise<Applied[]> {
    if (request.policyHeader !== undefined) return this.bucketsOf([this.parsedHeader(request.policyHeader)], request, true)
    const rules = this.rules.rulesFor(request.orgId)
    return rules instanceof Promise
      ? rules.then((policies) => this.bucketsOf(policies, request, false))
      : this.bucketsOf(rules, request, false)
  }

  private bucketsOf(policies: readonly Policy[], request: LimitRequest, fromHeader: boolean): Applied[] {
    const applied: Applied[] = []
    for (const policy of policies) {
      const value = segmentValue(policy, request)
      if (value === undefined) {
        // A header names its segment on purpose: a missing value is the caller's mistake. An organisation
        // rule on users or a property simply does not apply to a request without one.
        if (fromHeader)
          throw badRequest(`Gw-RateLimit-Policy has s=${policy.segment}, but the request has no ${segmentSource(policy)}`)
        continue
      }
      const { normalized, keyPart } = this.textOf(policy)
      const cents = policy.unit === 'cents'
      applied.push({
        check: {
          kind: 'bucket',
          key: keyOf(request.orgId, 'b', keyPart, value),
          limit: policy.quota,
          windowMs: policy.windowSeconds * 1000,
          need: cents ? (request.estimateCents ?? 0) : 1,
          take: cents ? 0 : 1,
        },
        policy: normalized,
        describe: `the policy ${normalized}`,
        cents,
      })
    }
    return applied
  }

  /** A malformed header throws every time (400); a valid one is parsed once. */
  private parsedHeader(header: string): Policy {
    let policy = this.parsedHeaders.get(header)
    if (!policy) {
      policy = parsePolicyHeader(header)
      if (this.parsedHeaders.size >= PARSED_HEADERS_MAX) this.parsedHeaders.clear()
      this.parsedHeaders.set(header, policy)
    }
    return policy
  }

  /** Computed once per policy: a header's parsed policy and an organisation's cached rules are reused. */
  private textOf(policy: Policy): PolicyText {
    let text = this.texts.get(policy)
    if (text === undefined) {
      text = policyText(policy)
      this.texts.set(policy, text)
    }
    return text
  }
}

/** The store's decisions made a verdict: the first refusal, else the tightest limit, is what the headers show. */
function verdictOf(applied: readonly Applied[], decisions: readonly Decision[]): LimitVerdict {
  let refusedAt = -1
  for (let i = 0; i < decisions.length && refusedAt < 0; i++) if (!(decisions[i] as Decision).allowed) refusedAt = i
  const shown = refusedAt >= 0 ? refusedAt : tightest(decisions)
  const decision = decisions[shown] as Decision
  const chosen = applied[shown] as Applied
  return {
    allowed: refusedAt < 0,
    limit: decision.limit,
    remaining: decision.remaining,
    policy: chosen.policy,
    retryAfterSeconds: decision.retryAfterSeconds,
    centsBuckets: centsBucketsOf(applied),
    reason: refusedAt >= 0 ? chosen.describe : undefined,
  }
}

const NO_CENTS_BUCKETS: LimitVerdict['centsBuckets'] = []

function centsBucketsOf(applied: readonly Applied[]): LimitVerdict['centsBuckets'] {
  let buckets: Array<LimitVerdict['centsBuckets'][number]> | undefined
  for (const { cents, check } of applied) {
    if (!cents) continue
    buckets ??= []
    buckets.push({ key: check.key, limit: check.limit, windowMs: check.windowMs })
  }
  return buckets ?? NO_CENTS_BUCKETS
}

function segmentValue(policy: Policy, request: LimitRequest): string | undefined {
  switch (policy.segment) {
    case 'global':
      return ''
    case 'user':
      return request.userId
    case 'prop':
      return request.properties[policy.property as string]
    case 'model':
      return request.model
  }
}

const segmentSource = (policy: Policy): string =>
  policy.segment === 'user' ? 'Gw-User-Id header' : `Gw-Property-${policy.property} header`

function tightest(decisions: readonly Decision[]): number {
  let best = 0
  for (let i = 1; i < decisions.length; i++) {
    const d = decisions[i] as Decision
    const current = decisions[best] as Decision
    if (d.remaining / d.limit < current.remaining / current.limit) best = i
  }
  return best
}
