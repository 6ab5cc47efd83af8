import type Redis from 'ioredis'
import type { CallAttempt } from '../../store/json-columns'
import type { CircuitBreaker } from '../../util/breaker'
import type { ValueOrPromise } from '../../util/value-or-promise'
import { compactEntry, entryOf } from './compact'

/** Spec 2.1: what a finished request reports, in the `gw` frame and through the lookup. */
export interface GatewayMeta {
  requestId: string
  provider: string
  model: string
  status: 'success' | 'error'
  requestCost?: number
  estimatedCost?: number
  creditsRemaining?: number
  gatewayMode?: 'passthrough' | 'translated'
  translationWarning?: string
  /** The model the caller asked for, when a budget's downgrade served another (`model`). */
  downgradedFrom?: string
  /** Every provider call the request made, in order: retries, other keys, fallback steps. */
  attempts?: CallAttempt[]
  /** Answered from gw's response cache: no provider was called, the request cost nothing. */
  cached?: boolean
  /** What a cached answer saved: the cost of the call that first made it. */
  cacheSavings?: number
}

/** The record and its owner in one entry: its presence is the global marker of spec 4.2. */
export interface StoredMeta {
  orgId: string
  meta: GatewayMeta
}

export interface MetaStore {
  /** The in-process store writes at once, without a promise: a call's settlement waits for nothing there. */
  put(entry: StoredMeta, ttlSeconds: number): ValueOrPromise<void>
  get(requestId: string): Promise<StoredMeta | undefined>
}

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/** Request ids are UUIDs: printable ASCII, kept a byte a character; anything else is refused, not cut. */
const STORABLE_ID = /^[\x20-\x7e]{1,255}$/
/**
 * The store's byte budget per entry. A call's entry in its compact form (below) with its header takes
 * about 190 bytes; the rest is room for the longer ones (a translation warning, fallback attempts).
 */
const BYTES_PER_ENTRY = 320
/** Entries the index and the queue start with room for; they double as traffic needs, up to the bound. */
const INITIAL_CAPACITY = 1_024
/** An entry: [u32 hash][u8 id length][id][f64 expiry][u32 length][the compact entry's JSON]. */
const HEADER = 17

/** FNV-1a over the id's character codes (ids are ASCII), as a 32-bit integer. */
function hashOf(id: string): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193)
  return hash >>> 0
}

/**
 * In-process, bounded, and off the JavaScript heap. It holds the most recent calls (GW_META_MAX_ENTRIES;
 * the lookup reads older ones, within their 300 s, from the request log). As objects in a Map, 200,000
 * entries were about 90 MB of heap that every young-generation collection walked again (pauses of
 * about 3 ms instead of 0.5). Here they are bytes the collector never looks into: entries are
 * appended to chunks (512 KiB for the default bound),
 * allocated as they are needed and let go when their entries are gone, and found through an
 * open-addressing index in a typed array.
 *
 * Every entry lives the same time, so insertion order is expiry order: lapsed entries are dropped
 * from the oldest end as new ones come. When the store is full by count, the oldest entry goes; when
 * writing comes round to the chunk of the oldest entries, they go with their chunk.
 */
export class MemoryMetaStore implements MetaStore {
  private readonly chunkBits: number
  private readonly chunkSize: number
  private readonly chunks: Array<{ bytes: Uint8Array; view: DataView } | undefined>
  /** Linear-probing index: an entry's position + 1 (its chunk number, then its offset), 0 when empty. */
  private slots: Int32Array
  private mask: number
  /** Entry positions, oldest first, as a circular queue. */
  private order: Int32Array
  private first = 0
  private count = 0
  /** Where the next entry goes. */
  private chunk = 0
  private offset = 0
  /** Where an entry's JSON is encoded before it is copied in: most entries fit, larger ones are encoded apart. */
  private readonly scratch = new Uint8Array(4096)

  constructor(
    private readonly maxEntries = 20_000,
    private readonly now: () => number = Date.now,
  ) {
    const budget = Math.max(64 * 1024, maxEntries * BYTES_PER_ENTRY)
    // Positions are 31-bit: about 6.7 million entries at most, far beyond what one process should hold.
    if (budget >= 2 ** 31) throw new Error(`an in-process metadata store of ${maxEntries} entries is too large`)
    // At least 8 chunks, so coming round to the oldest chunk drops at most an eighth of the store.
    this.chunkBits = Math.min(20, Math.max(12, Math.floor(Math.log2(budget / 8))))
    this.chunkSize = 2 ** this.chunkBits
    this.chunks = new Array(Math.ceil(budget / this.chunkSize)).fill(undefined)
    const capacity = Math.min(maxEntries, INITIAL_CAPACITY)
    this.order = new Int32Array(capacity)
    this.slots = new Int32Array(0)
    this.mask = 0
    this.reindex(capacity)
  }

  put(entry: StoredMeta, ttlSeconds: number): void {
    const id = entry.meta.requestId.toLowerCase()
    if (!STORABLE_ID.test(id)) throw new Error('a request id must be 1 to 255 printable ASCII characters')
    const json = compactEntry(entry, id)
    // A character is at least a byte: what cannot fit by its length is refused before it is encoded.
    const tooLarge = () => new Error(`a metadata entry of ${json.length} characters cannot be stored`)
    if (HEADER + id.length + json.length > this.chunkSize) throw tooLarge()
    const payload =
      json.length * 3 <= this.scratch.length
        ? this.scratch.subarray(0, encoder.encodeInto(json, this.scratch).written)
        : encoder.encode(json)
    const size = HEADER + id.length + payload.length
    if (size > this.chunkSize) throw tooLarge()

    const now = this.now()
    while (this.count > 0 && this.expiryAt(this.oldest()) <= now) this.evictOldest()
    if (this.count === this.maxEntries) this.evictOldest()
    if (this.count === this.order.length) this.grow()
    const position = this.place(size)
    const { bytes, view } = this.chunkOf(position)
    const at = position & (this.chunkSize - 1)
    const hash = hashOf(id)
    view.setUint32(at, hash)
    bytes[at + 4] = id.length
    for (let i = 0; i < id.length; i++) bytes[at + 5 + i] = id.charCodeAt(i)
    view.setFloat64(at + 5 + id.length, now + ttlSeconds * 1000)
    view.setUint32(at + 13 + id.length, payload.length)
    bytes.set(payload, at + HEADER + id.length)
    this.order[(this.first + this.count) % this.order.length] = position
    this.count += 1
    this.index(hash, position)
  }

  async get(requestId: string): Promise<StoredMeta | undefined> {
    const id = requestId.toLowerCase()
    const position = this.find(id)
    if (position === undefined || this.expiryAt(position) <= this.now()) return undefined
    const { bytes, view } = this.chunkOf(position)
    const start = (position & (this.chunkSize - 1)) + HEADER + id.length
    return entryOf(decoder.decode(bytes.subarray(start, start + view.getUint32(start - 4))), id)
  }

  /** Entries held, lapsed ones included until new entries push them out. */
  get size(): number {
    return this.count
  }

  private chunkOf(position: number): { bytes: Uint8Array; view: DataView } {
    return this.chunks[position >>> this.chunkBits] as { bytes: Uint8Array; view: DataView }
  }

  private oldest(): number {
    return this.order[this.first] as number
  }

  private expiryAt(position: number): number {
    const { bytes, view } = this.chunkOf(position)
    const at = position & (this.chunkSize - 1)
    return view.getFloat64(at + 5 + (bytes[at + 4] as number))
  }

  /** Where `size` bytes go: after the newest entry, or at the start of the next chunk, whose entries then go. */
  private place(size: number): number {
    if (this.offset + size > this.chunkSize) {
      this.chunk = (this.chunk + 1) % this.chunks.length
      this.offset = 0
      while (this.count > 0 && this.oldest() >>> this.chunkBits === this.chunk) this.evictOldest()
    }
    if (!this.chunks[this.chunk]) {
      const bytes = new Uint8Array(this.chunkSize)
      this.chunks[this.chunk] = { bytes, view: new DataView(bytes.buffer) }
    }
    const position = (this.chunk << this.chunkBits) | this.offset
    this.offset += size
    return position
  }

  /** Drops the oldest entry; a chunk left without entries is let go, unless it is being written. */
  private evictOldest(): void {
    const position = this.oldest()
    this.unindex(position)
    this.first = (this.first + 1) % this.order.length
    this.count -= 1
    const chunk = position >>> this.chunkBits
    if (chunk !== this.chunk && (this.count === 0 || this.oldest() >>> this.chunkBits !== chunk)) this.chunks[chunk] = undefined
  }

  /** Twice the room in the queue and the index (rare: once per size, while traffic grows). */
  private grow(): void {
    const capacity = Math.min(this.maxEntries, this.order.length * 2)
    const order = new Int32Array(capacity)
    for (let k = 0; k < this.count; k++) order[k] = this.order[(this.first + k) % this.order.length] as number
    this.order = order
    this.first = 0
    this.reindex(capacity)
  }

  /** A new index with room for `capacity` entries at most half full, filled oldest first. */
  private reindex(capacity: number): void {
    let size = 1
    while (size < capacity * 2) size <<= 1
    this.slots = new Int32Array(size)
    this.mask = size - 1
    for (let k = 0; k < this.count; k++) {
      const position = this.order[(this.first + k) % this.order.length] as number
      this.index(this.hashAt(position), position)
    }
  }

  private hashAt(position: number): number {
    return this.chunkOf(position).view.getUint32(position & (this.chunkSize - 1))
  }

  /** Whether the entries at two positions have the same id. */
  private sameId(a: number, b: number): boolean {
    const x = this.chunkOf(a).bytes
    const y = this.chunkOf(b).bytes
    const i = a & (this.chunkSize - 1)
    const j = b & (this.chunkSize - 1)
    const length = x[i + 4] as number
    if (y[j + 4] !== length) return false
    for (let k = 5; k < 5 + length; k++) if (x[i + k] !== y[j + k]) return false
    return true
  }

  private find(id: string): number | undefined {
    for (let slot = hashOf(id) & this.mask; this.slots[slot] !== 0; slot = (slot + 1) & this.mask) {
      const position = (this.slots[slot] as number) - 1
      const bytes = this.chunkOf(position).bytes
      const at = position & (this.chunkSize - 1)
      if (bytes[at + 4] !== id.length) continue
      let same = true
      for (let i = 0; same && i < id.length; i++) same = bytes[at + 5 + i] === id.charCodeAt(i)
      if (same) return position
    }
    return undefined
  }

  /** Points the entry's id at it; an earlier entry of the same id stays in its chunk, unreachable, until evicted. */
  private index(hash: number, position: number): void {
    let slot = hash & this.mask
    while (this.slots[slot] !== 0 && !this.sameId((this.slots[slot] as number) - 1, position)) slot = (slot + 1) & this.mask
    this.slots[slot] = position + 1
  }

  /** Removes the slot of the entry at `position`, if the index still points at it, closing the gap behind it. */
  private unindex(position: number): void {
    let slot = this.hashAt(position) & this.mask
    while (this.slots[slot] !== 0 && this.slots[slot] !== position + 1) slot = (slot + 1) & this.mask
    if (this.slots[slot] === 0) return
    let hole = slot
    for (let next = (slot + 1) & this.mask; this.slots[next] !== 0; next = (next + 1) & this.mask) {
      const home = this.hashAt((this.slots[next] as number) - 1) & this.mask
      // An entry moves back into the hole unless its home lies after the hole (cyclically).
      if (((next - home) & this.mask) >= ((next - hole) & this.mask)) {
        this.slots[hole] = this.slots[next] as number
        hole = next
      }
    }
    this.slots[hole] = 0
  }
}

/** Shared by every instance: one key per request with Redis's own expiry, so any instance answers for any other. */
export class RedisMetaStore implements MetaStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'gw:meta:',
  ) {}

  async put(entry: StoredMeta, ttlSeconds: number): Promise<void> {
    await this.redis.set(`${this.prefix}${entry.meta.requestId.toLowerCase()}`, JSON.stringify(entry), 'EX', ttlSeconds)
  }

  async get(requestId: string): Promise<StoredMeta | undefined> {
    const raw = await this.redis.get(`${this.prefix}${requestId.toLowerCase()}`)
    return raw === null ? undefined : (JSON.parse(raw) as StoredMeta)
  }
}

/**
 * Redis while it answers; this instance's own memory while the breaker keeps calls off it. A record
 * put during an outage stays here for its lifetime, so this instance still answers for it after Redis
 * is back. A lookup of a request another instance served during the outage finds nothing here; the
 * lookup then reads the request's record, once it is written to the shared database.
 */
export class FailoverMetaStore implements MetaStore {
  constructor(
    private readonly primary: MetaStore,
    private readonly fallback: MetaStore,
    private readonly breaker: CircuitBreaker,
  ) {}

  get degraded(): boolean {
    return this.breaker.isOpen
  }

  put(entry: StoredMeta, ttlSeconds: number): Promise<void> {
    return this.breaker.run(
      async () => this.primary.put(entry, ttlSeconds),
      async () => this.fallback.put(entry, ttlSeconds),
    )
  }

  async get(requestId: string): Promise<StoredMeta | undefined> {
    const shared = await this.breaker.run(
      () => this.primary.get(requestId),
      async () => undefined,
    )
    return shared ?? this.fallback.get(requestId)
  }
}
