import type { CircuitBreaker } from '../util/breaker'
import type { CounterSpec, CounterState, MemorySpendStore, ReserveOutcome, SpendStore } from './counters'

/**
 * Redis counts while it answers. When it does not, each instance keeps enforcing every limit with its
 * own counters, seeded from the request log (never fail-open); with several instances each then lets
 * through up to the whole limit, which is the price of staying up and is said in the operator docs.
 *
 * Each change of hands starts the new holder from the log: the in-process counters are dropped when
 * Redis comes back (what they counted is in the log), and the Redis counters this instance touched
 * during the outage are marked unseeded, so the next call counts the outage's spend in from the log.
 */
export class FailoverSpendStore implements SpendStore {
  readonly name = 'redis'
  private usedFallback = false

  constructor(
    private readonly primary: SpendStore,
    private readonly fallback: MemorySpendStore,
    private readonly breaker: CircuitBreaker,
  ) {}

  get degraded(): boolean {
    return this.breaker.isOpen
  }

  reserve(holdId: string, expiresAt: number, counters: readonly CounterSpec[], amounts: readonly number[], now: number) {
    return this.run<ReserveOutcome>(
      () => this.primary.reserve(holdId, expiresAt, counters, amounts, now),
      () => this.fallback.reserve(holdId, expiresAt, counters, amounts, now),
    )
  }

  settle(holdId: string, counters: readonly CounterSpec[], used: readonly number[], now: number) {
    return this.run<number[]>(
      () => this.primary.settle(holdId, counters, used, now),
      () => this.fallback.settle(holdId, counters, used, now),
    )
  }

  seed(counter: CounterSpec, logged: number, now: number) {
    return this.run<void>(
      () => this.primary.seed(counter, logged, now),
      () => this.fallback.seed(counter, logged, now),
    )
  }

  read(counters: readonly CounterSpec[], now: number) {
    return this.run<CounterState[]>(
      () => this.primary.read(counters, now),
      () => this.fallback.read(counters, now),
    )
  }

  unseed(keys: readonly string[]) {
    return this.run<void>(
      () => this.primary.unseed(keys),
      () => this.fallback.unseed(keys),
    )
  }

  private async run<T>(primary: () => Promise<T>, fallback: () => Promise<T>): Promise<T> {
    return this.breaker.run(
      async () => {
        if (this.usedFallback) {
          // Back from an outage: what this instance counted alone is in the log, and is read from there.
          await this.primary.unseed(this.fallback.keys())
          this.fallback.clear()
          this.usedFallback = false
        }
        return primary()
      },
      () => {
        if (!this.usedFallback) {
          // Counters left from an earlier outage know nothing of what Redis counted since.
          this.fallback.clear()
          this.usedFallback = true
        }
        return fallback()
      },
    )
  }
}
