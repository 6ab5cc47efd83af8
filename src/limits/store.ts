import type { ValueOrPromise } from '../util/value-or-promise'
import { type BucketState, chargeBucket, type Decision, drawBucket, slideWindow, type WindowState } from './algorithms'

/** One limit to check for a request: a layer-1 window or a layer-2 bucket, under its own key. */
export type Check =
  | { kind: 'window'; key: string; limit: number; windowMs: number }
  | { kind: 'bucket'; key: string; limit: number; windowMs: number; need: number; take: number }

/**
 * Where limiter state lives. `decide` is atomic over all of a request's checks: either every one
 * passes and all are counted, or the request is refused and nothing is counted, so a request refused
 * by one limit does not use up another.
 */
export interface LimiterStore {
  readonly name: string
  /** In process, decided at once; a shared store answers with a promise. */
  decide(checks: readonly Check[]): ValueOrPromise<Decision[]>
  /** Takes a finished call's real cost from a cents bucket. */
  charge(key: string, limit: number, windowMs: number, amount: number): Promise<void>
}

type State = WindowState | BucketState

/** In-process state, bounded: the least recently used keys go first when it is full. */
export class MemoryLimiterStore implements LimiterStore {
  readonly name = 'memory'
  private readonly states = new Map<string, State>()

  constructor(
    private readonly now: () => number = Date.now,
    private readonly maxKeys = 200_000,
  ) {}

  /** Synchronous: nothing else runs between reading and writing, which is what makes it atomic. */
  decide(checks: readonly Check[]): Decision[] {
    const now = this.now()
    const results = checks.map((check) => {
      const previous = this.states.get(check.key)
      return check.kind === 'window'
        ? slideWindow(previous as WindowState | undefined, check.limit, check.windowMs, now)
        : drawBucket(previous as BucketState | undefined, check.limit, check.windowMs, check.need, check.take, now)
    })
    if (results.every((r) => r.decision.allowed)) {
      results.forEach((r, i) => {
        this.put((checks[i] as Check).key, r.state)
      })
    }
    return results.map((r) => r.decision)
  }

  async charge(key: string, limit: number, windowMs: number, amount: number): Promise<void> {
    this.put(key, chargeBucket(this.states.get(key) as BucketState | undefined, limit, windowMs, amount, this.now()))
  }

  private put(key: string, state: State): void {
    this.states.delete(key)
    if (this.states.size >= this.maxKeys) {
      const oldest = this.states.keys().next()
      if (!oldest.done) this.states.delete(oldest.value)
    }
    this.states.set(key, state)
  }
}
