/**
 * Where the spend of a limit's window is counted: what has been spent (settled calls) and what is
 * held (reservations of calls under way), per counter. A counter is one limit's window for one scope
 * value (one customer, one key...). The in-process store and the Redis store (redis-counters.ts) do
 * the same arithmetic; the contract test runs both.
 *
 * A counter's window is a ring of slots: one slot for a fixed window, whose start is the window's; more
 * for a sliding window, where each slot holds the spend of a short span and the slots that started
 * within the window count. Settled spend goes into the slot the call was reserved in, so a call that
 * ends after its window has rolled over is counted where the request log counts it: at its start.
 */

export interface CounterSpec {
  key: string
  /** In the limit's unit; an alert-only limit counts with no ceiling (`Number.MAX_SAFE_INTEGER`). */
  limit: number
  slots: number
  slotMs: number
  /** The start of the slot a call made now falls in. */
  slotStart: number
  /** Slots that started at or after this count towards the limit. */
  countFrom: number
  /** What marks the counter as seeded from the request log for the current window. */
  seedMark: string
  /** How long the counter is kept after its last change: when it is gone, nothing it held still counts. */
  ttlMs: number
}

export interface CounterState {
  spent: number
  reserved: number
  /** Whether the request log's spend of the window has been counted in. */
  seeded: boolean
  /** The start of the oldest counted slot that holds spend: when a sliding window first frees some. */
  oldestSlot?: number
}

export type ReserveOutcome =
  | { kind: 'reserved'; before: CounterState[] }
  | { kind: 'refused'; index: number; before: CounterState[] }
  /** Counters to seed from the request log first; nothing was reserved. */
  | { kind: 'unseeded'; indexes: number[] }

export interface SpendStore {
  readonly name: string
  /**
   * All or nothing, atomically: every counter holds its amount under `holdId` until `expiresAt`, or
   * none does (the first counter whose spent, held and asked amounts would pass its limit refuses).
   */
  reserve(
    holdId: string,
    expiresAt: number,
    counters: readonly CounterSpec[],
    amounts: readonly number[],
    now: number,
  ): Promise<ReserveOutcome>
  /**
   * Lets go of the hold on each counter and adds what the call used, in the slot it was reserved in
   * (the counters as they were at reservation). Answers each counter's spent amount afterwards.
   */
  settle(holdId: string, counters: readonly CounterSpec[], used: readonly number[], now: number): Promise<number[]>
  /**
   * Counts the request log's spend of the window in, once per seed mark: the counter's spend becomes
   * at least `logged` (what it counted since can only add to the truth, and is not counted twice).
   */
  seed(counter: CounterSpec, logged: number, now: number): Promise<void>
  read(counters: readonly CounterSpec[], now: number): Promise<CounterState[]>
  /** Forgets the seed marks of these counters, so they are counted from the log again (after an outage). */
  unseed(keys: readonly string[]): Promise<void>
}

interface Hold {
  amount: number
  expiresAt: number
}

interface Counter {
  starts: number[]
  values: number[]
  reserved: number
  holds: Map<string, Hold>
  /** The earliest expiry among the holds: no hold needs looking at before then. */
  nextExpiry: number
  seedMark?: string
  /** When it was last used: the least recently used go first when the store is full. */
  usedAt: number
}

const slotIndex = (spec: Pick<CounterSpec, 'slots' | 'slotMs'>, slotStart: number) =>
  Math.floor(slotStart / spec.slotMs) % spec.slots

/** Adds to a slot when it holds that start, takes it over when it holds an older one, leaves a newer one be. */
function addToSlot(counter: Counter, spec: CounterSpec, slotStart: number, amount: number): void {
  if (amount <= 0) return
  const i = slotIndex(spec, slotStart)
  const held = counter.starts[i] ?? -1
  if (held === slotStart) counter.values[i] = (counter.values[i] ?? 0) + amount
  else if (held < slotStart) {
    counter.starts[i] = slotStart
    counter.values[i] = amount
  }
}

/** When the store is full, the least recently used of this many of the oldest counters goes. */
const EVICTION_SAMPLE = 64

/**
 * In-process counters, bounded: when full, a counter long unused goes (the least recently used of the
 * oldest few), and a counter gone is seeded again from the log when next used.
 */
export class MemorySpendStore implements SpendStore {
  readonly name = 'memory'
  private readonly counters = new Map<string, Counter>()

  constructor(private readonly maxCounters = 200_000) {}

  async reserve(
    holdId: string,
    expiresAt: number,
    specs: readonly CounterSpec[],
    amounts: readonly number[],
    now: number,
  ): Promise<ReserveOutcome> {
    const counters: Counter[] = []
    const before: CounterState[] = []
    const unseeded: number[] = []
    let refused = -1
    for (let i = 0; i < specs.length; i++) {
      const spec = specs[i] as CounterSpec
      const counter = this.counter(spec, now)
      const state = stateOf(counter, spec)
      counters.push(counter)
      before.push(state)
      if (!state.seeded) unseeded.push(i)
      else if (refused < 0 && state.spent + state.reserved + (amounts[i] ?? 0) > spec.limit) refused = i
    }
    if (unseeded.length > 0) return { kind: 'unseeded', indexes: unseeded }
    if (refused >= 0) return { kind: 'refused', index: refused, before }
    for (let i = 0; i < counters.length; i++) {
      const counter = counters[i] as Counter
      const amount = amounts[i] ?? 0
      counter.reserved += amount
      counter.holds.set(holdId, { amount, expiresAt })
      if (expiresAt < counter.nextExpiry) counter.nextExpiry = expiresAt
    }
    return { kind: 'reserved', before }
  }

  async settle(holdId: string, specs: readonly CounterSpec[], used: readonly number[], now: number): Promise<number[]> {
    return specs.map((spec, i) => {
      const counter = this.counter(spec, now)
      const hold = counter.holds.get(holdId)
      if (hold) {
        counter.holds.delete(holdId)
        counter.reserved -= hold.amount
      }
      addToSlot(counter, spec, spec.slotStart, used[i] ?? 0)
      return stateOf(counter, spec).spent
    })
  }

  async seed(spec: CounterSpec, logged: number, now: number): Promise<void> {
    const counter = this.counter(spec, now)
    if (counter.seedMark === spec.seedMark) return
    const { spent } = stateOf(counter, spec)
    addToSlot(counter, spec, spec.slotStart, logged - spent)
    counter.seedMark = spec.seedMark
  }

  async read(specs: readonly CounterSpec[], now: number): Promise<CounterState[]> {
    return specs.map((spec) => stateOf(this.counter(spec, now), spec))
  }

  async unseed(keys: readonly string[]): Promise<void> {
    for (const key of keys) {
      const counter = this.counters.get(key)
      if (counter) counter.seedMark = undefined
    }
  }

  /** Every counter this store holds: what an outage counted, to be seeded again from the log after it. */
  keys(): string[] {
    return [...this.counters.keys()]
  }

  clear(): void {
    this.counters.clear()
  }

  /** Moving a counter to the end of the map on every use would cost every call; a sample of the oldest is enough. */
  private evict(): void {
    let victim: string | undefined
    let oldest = Number.POSITIVE_INFINITY
    let looked = 0
    for (const [key, counter] of this.counters) {
      if (counter.usedAt < oldest) {
        oldest = counter.usedAt
        victim = key
      }
      if (++looked >= EVICTION_SAMPLE) break
    }
    if (victim !== undefined) this.counters.delete(victim)
  }

  /** The counter, its expired holds let go, marked as used now. */
  private counter(spec: CounterSpec, now: number): Counter {
    let counter = this.counters.get(spec.key)
    if (!counter) {
      if (this.counters.size >= this.maxCounters) this.evict()
      counter = { starts: [], values: [], reserved: 0, holds: new Map(), nextExpiry: Number.POSITIVE_INFINITY, usedAt: now }
      this.counters.set(spec.key, counter)
    }
    counter.usedAt = now
    if (now >= counter.nextExpiry) {
      let next = Number.POSITIVE_INFINITY
      for (const [id, hold] of counter.holds) {
        if (hold.expiresAt <= now) {
          counter.holds.delete(id)
          counter.reserved -= hold.amount
        } else next = Math.min(next, hold.expiresAt)
      }
      counter.nextExpiry = next
    }
    return counter
  }
}

function stateOf(counter: Counter, spec: CounterSpec): CounterState {
  let spent = 0
  let oldestSlot: number | undefined
  for (let i = 0; i < spec.slots; i++) {
    const start = counter.starts[i]
    const value = counter.values[i] ?? 0
    if (start === undefined || start < spec.countFrom) continue
    spent += value
    if (value > 0 && (oldestSlot === undefined || start < oldestSlot)) oldestSlot = start
  }
  return { spent, reserved: Math.max(0, counter.reserved), seeded: counter.seedMark === spec.seedMark, oldestSlot }
}
