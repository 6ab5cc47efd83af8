import type { Logger } from '../log'
import type { Decision } from './algorithms'
import type { Check, LimiterStore } from './store'

/**
 * Redis is authoritative while it answers. When it does not, each instance keeps enforcing with its
 * own in-process state (never fail-open), says so once in the log, reports itself degraded, and
 * tries Redis again after a pause; the first answer from Redis puts it back in charge.
 */
export class FailoverLimiterStore implements LimiterStore {
  readonly name = 'redis'
  private downSince: number | undefined

  constructor(
    private readonly primary: LimiterStore,
    private readonly fallback: LimiterStore,
    private readonly log: Logger,
    private readonly retryAfterMs = 1_000,
    private readonly now: () => number = Date.now,
  ) {}

  get degraded(): boolean {
    return this.downSince !== undefined
  }

  async decide(checks: readonly Check[]): Promise<Decision[]> {
    return this.run((store) => store.decide(checks))
  }

  async charge(key: string, limit: number, windowMs: number, amount: number): Promise<void> {
    return this.run((store) => store.charge(key, limit, windowMs, amount))
  }

  private async run<T>(work: (store: LimiterStore) => Promise<T>): Promise<T> {
    if (this.downSince !== undefined && this.now() - this.downSince < this.retryAfterMs) return work(this.fallback)
    try {
      const result = await work(this.primary)
      if (this.downSince !== undefined) {
        this.downSince = undefined
        this.log.info('rate limiter: Redis answers again; limits are shared across instances again')
      }
      return result
    } catch (error) {
      if (this.downSince === undefined) {
        this.log.error('rate limiter: Redis unreachable; enforcing limits per instance until it is back', {
          error: String(error),
        })
      }
      this.downSince = this.now()
      return work(this.fallback)
    }
  }
}
