export type BreakerState = 'closed' | 'open' | 'half_open'

export interface BreakerOptions {
  /** How long to stay away after a failure before one call may try again. */
  cooldownMs?: number
  now?: () => number
  /** Called once per transition (opened, closed again), never per call: the place to log. */
  onChange?: (open: boolean, cause?: unknown) => void
}

/**
 * Stands between callers and a shared service that can go away (Redis). While the service answers,
 * every call goes to it. The first failure opens the breaker: from then on calls go straight to
 * their fallback, without touching the service, so an outage costs nothing per call instead of a
 * command timeout per call. After the cooldown one call (the probe) is let through while the others
 * keep falling back; its success closes the breaker, its failure starts another cooldown.
 *
 * One failure is enough to open it: a service that failed one call is rarely fine for the next, and
 * opening by mistake costs only a cooldown of working from the fallback.
 */
export class CircuitBreaker {
  private openedAt: number | undefined
  private probing = false
  /** Bumped on every transition, so a call begun before one cannot reopen or close what followed it. */
  private generation = 0
  private readonly cooldownMs: number
  private readonly now: () => number
  private readonly onChange: (open: boolean, cause?: unknown) => void

  constructor(options: BreakerOptions = {}) {
    this.cooldownMs = options.cooldownMs ?? 1_000
    this.now = options.now ?? Date.now
    this.onChange = options.onChange ?? (() => undefined)
  }

  get state(): BreakerState {
    if (this.openedAt === undefined) return 'closed'
    return this.probing || this.now() - this.openedAt >= this.cooldownMs ? 'half_open' : 'open'
  }

  /** Whether callers are working from their fallback (open, or waiting for a probe to succeed). */
  get isOpen(): boolean {
    return this.openedAt !== undefined
  }

  /**
   * Runs `primary` when the breaker lets it; otherwise, or when it fails, answers `fallback`. A
   * failure of `fallback` itself is the caller's to see.
   */
  async run<T>(primary: () => Promise<T>, fallback: () => Promise<T>): Promise<T> {
    if (this.openedAt === undefined) {
      const generation = this.generation
      try {
        return await primary()
      } catch (error) {
        if (generation === this.generation) this.trip(error)
        return fallback()
      }
    }
    if (this.probing || this.now() - this.openedAt < this.cooldownMs) return fallback()
    return this.probe(primary, fallback)
  }

  /** Opens the breaker without a failed call: for a failure seen elsewhere (no connection at start). */
  trip(cause?: unknown): void {
    if (this.openedAt !== undefined) return
    this.openedAt = this.now()
    this.generation += 1
    this.onChange(true, cause)
  }

  private async probe<T>(primary: () => Promise<T>, fallback: () => Promise<T>): Promise<T> {
    this.probing = true
    let result: T
    try {
      result = await primary()
    } catch {
      this.openedAt = this.now()
      return fallback()
    } finally {
      this.probing = false
    }
    this.openedAt = undefined
    this.generation += 1
    this.onChange(false)
    return result
  }
}
