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

/**
 * A key's state, and whether it was used since eviction last came past it. Updated in place: moving a
 * key to the end of the map on every use (delete, then set) was most of what a call's limits allocated.
 */
interface Held {
  state: State
  used: boolean
}

/**
 * In-process state, bounded. When it is full, the oldest key not used since eviction last came past
 * it goes (a second chance, an approximation of least recently used), so a flood of new keys pushes
 * out idle ones, not the limits of keys in use.
 */
export class MemoryLimiterStore implements LimiterStore {
  readonly name = 'memory'
  private readonly states = new Map<string, Held>()

  constructor(
    private readonly now: () => number = Date.now,
    private readonly maxKeys = 200_000,
  ) {}

  /** Synchronous: nothing else runs between reading and writing, which is what makes it atomic. */
  decide(checks: readonly Check[]): Decision[] {
    const now = this.now()
    const decisions = new Array<Decision>(checks.length)
    const states = new Array<State>(checks.length)
    let allowed = true
    for (let i = 0; i < checks.length; i++) {
      const check = checks[i] as Check
      const previous = this.states.get(check.key)?.state
      const { state, decision } =
        check.kind === 'window'
          ? slideWindow(previous as WindowState | undefined, check.limit, check.windowMs, now)
          : drawBucket(previous as BucketState | undefined, check.limit, check.windowMs, check.need, check.take, now)
      decisions[i] = decision
      states[i] = state
      allowed &&= decision.allowed
    }
    if (allowed) for (let i = 0; i < checks.length; i++) this.put((checks[i] as Check).key, states[i] as State)
    return decisions
  }

  async charge(key: string, limit: number, windowMs: number, amount: number): Promise<void> {
    this.put(key, chargeBucket(this.states.get(key)?.state as BucketState | undefined, limit, windowMs, amount, this.now()))
  }

  private put(key: string, state: State): void {
    const held = this.states.get(key)
    if (held) {
      held.state = state
      held.used = true
      return
    }
    if (this.states.size >= this.maxKeys) this.evictOne()
    this.states.set(key, { state, used: false })
  }

  /** The oldest key unused since the last pass goes; a used one loses its mark and moves behind the rest. */
  private evictOne(): void {
    for (const [key, held] of this.states) {
      this.states.delete(key)
      if (!held.used) return
      held.used = false
      this.states.set(key, held)
    }
  }
}
