import type { CircuitBreaker } from '../util/breaker'
import type { Decision } from './algorithms'
import type { Check, LimiterStore } from './store'

/**
 * Redis is authoritative while it answers. When it does not, each instance keeps enforcing with its
 * own in-process state (never fail-open) and reports itself degraded, while the breaker keeps calls
 * off Redis; the breaker's first successful probe puts Redis back in charge. What the fallback counted
 * during the outage is not carried over: Redis's own windows are the truth again from then on.
 */
export class FailoverLimiterStore implements LimiterStore {
  readonly name = 'redis'

  constructor(
    private readonly primary: LimiterStore,
    private readonly fallback: LimiterStore,
    private readonly breaker: CircuitBreaker,
  ) {}

  get degraded(): boolean {
    return this.breaker.isOpen
  }

  decide(checks: readonly Check[]): Promise<Decision[]> {
    return this.breaker.run(
      async () => this.primary.decide(checks),
      async () => this.fallback.decide(checks),
    )
  }

  charge(key: string, limit: number, windowMs: number, amount: number): Promise<void> {
    return this.breaker.run(
      () => this.primary.charge(key, limit, windowMs, amount),
      () => this.fallback.charge(key, limit, windowMs, amount),
    )
  }
}
