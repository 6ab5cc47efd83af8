/**
 * Where a call's time went, to fractions of a millisecond: its waits on providers, and when its answer
 * began to go out. The rest, up to then, is gw's own work. The record's whole milliseconds cannot
 * show that part: it is usually under one.
 */
export class CallTiming {
  readonly began = performance.now()
  private waitedMs = 0
  private answeredAt: number | undefined

  /** A wait on a provider: from sending the request to an answer gw can serve, or a failure. */
  async waitOn<T>(work: Promise<T>): Promise<T> {
    const at = performance.now()
    try {
      return await work
    } finally {
      if (this.answeredAt === undefined) this.waitedMs += performance.now() - at
    }
  }

  /** The answer began to go out: what the provider sends after this (a stream's rest) is the provider's time. */
  answered(): void {
    this.answeredAt ??= performance.now()
  }

  /**
   * The call so far, split in two: gw's own work before its answer went out (the whole call, when
   * none has yet), and the rest, which is the provider's.
   */
  split(now = performance.now()): { totalMs: number; overheadMs: number; providerMs: number } {
    const totalMs = Math.max(0, now - this.began)
    const overheadMs = Math.min(totalMs, Math.max(0, (this.answeredAt ?? now) - this.began - this.waitedMs))
    return { totalMs, overheadMs, providerMs: totalMs - overheadMs }
  }
}
