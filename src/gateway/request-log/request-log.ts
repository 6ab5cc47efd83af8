import type { BodyPolicy } from '../../directory/call-settings'
import type { Logger } from '../../log'
import { errorMessage } from '../../store/faults'
import type { RequestRecord } from '../../store/repositories/requests'
import type { BodyCapture } from './body-capture'

/** A request's record and, when captured, its bodies with what its organisation wants done with them. */
export interface LogEntry {
  record: RequestRecord
  bodies?: { request: BodyCapture; response: BodyCapture; policy: BodyPolicy }
}

/** A log entry as a writer receives it: plain data, so that it can cross to the writer's own thread. */
export interface WritableEntry {
  record: RequestRecord
  bodies?: { request: string; response: string; truncated: boolean; policy: BodyPolicy }
}

const writable = ({ record, bodies }: LogEntry): WritableEntry =>
  bodies
    ? {
        record,
        bodies: {
          request: bodies.request.text(),
          response: bodies.response.text(),
          truncated: bodies.request.truncated || bodies.response.truncated,
          policy: bodies.policy,
        },
      }
    : { record }

/** What a pass-through-billed record takes from its organisation's credits (nano-USD); 0 for the rest. */
export const debitOf = ({ record }: { record: RequestRecord }): number =>
  record.ptb && record.costNano !== null && record.costNano > 0 ? record.costNano : 0

/** Organisations' credit balances (nano-USD) right after a batch took its charges. */
export type SettledBalances = ReadonlyMap<string, number>

/** A record the database refused for its values: kept apart by the writer, and never tried again. */
export interface SetAside {
  requestId: string
  orgId: string
  error: string
}

/** What writing a batch did: the balances its charges left, and the records it had to set aside. */
export interface WriteOutcome {
  balances: SettledBalances
  setAside: readonly SetAside[]
}

/**
 * Writes a batch: every record is written or set aside once the promise resolves. It fails, and the
 * log keeps the whole batch for later, only when the database cannot be reached; what it wrote by then
 * is skipped when the batch is tried again.
 */
export type LogWriter = (entries: readonly WritableEntry[]) => Promise<WriteOutcome | undefined>

export interface RequestLogStats {
  queued: number
  written: number
  dropped: number
  /** Records written without their bodies (neither kept nor scanned) because the queue's byte budget was spent. */
  bodiesDropped: number
  /** Records the database refused for their values, kept in `request_log_rejects` instead. */
  setAside: number
  failedFlushes: number
  /** How long the oldest queued record has waited (ms); 0 when nothing waits. */
  oldestQueuedMs: number
}

const bodyBytes = (entry: LogEntry): number => (entry.bodies ? entry.bodies.request.bytes + entry.bodies.response.bytes : 0)

export interface RequestLogOptions {
  /** Most records held in memory; beyond it a record is dropped, counted and logged. */
  capacity?: number
  /** Most body bytes held in memory; beyond it records are kept without their bodies. */
  bodyBudget?: number
  /** Most records written in one flush. */
  batchSize?: number
  /**
   * Most body bytes written in one flush (a single larger record still goes alone). A batch is copied
   * to the writer thread on the server's loop, and written in one transaction that the server's own
   * SQLite writes wait for: 1,000 records with 64 KB prompts took 15 ms to post (the large-prompts bench).
   */
  batchBodyBytes?: number
  /** How long a record may wait for companions before a flush. */
  flushIntervalMs?: number
  now?: () => number
}

/** A queued entry and when it was queued: the health check reports the oldest one's wait. */
interface Queued {
  entry: LogEntry
  at: number
}

/** Pause before retrying a failed batch: it doubles with each failure in a row, up to the cap. */
const RETRY_BASE_MS = 500
const RETRY_MAX_MS = 5_000

/**
 * The request log's writer: the gateway hands it a record and moves on; records are written in
 * batches from a bounded queue. A failed write keeps its records for the next try, so a database
 * hiccup loses nothing; a record the database refuses is set aside by the writer, counted and logged,
 * and never holds up the ones behind it; only a full queue drops, and never silently. `drain()` writes
 * everything before shutdown. It also knows what the queued records will take from each
 * organisation's credits (`unwrittenDebit`), and tells listeners the balances a written batch left
 * (`onSettled`).
 */
export class RequestLog {
  private queue: Queued[] = []
  /**
   * The queued records by id, until their batch is written: the metadata lookup reads a call here
   * between its answer and its record reaching the database (spec 4.2), so nothing is kept twice.
   */
  private readonly unwrittenRecords = new Map<string, RequestRecord>()
  private readonly unwritten = new Map<string, number>()
  private readonly settledListeners: Array<(balances: SettledBalances) => void> = []
  private readonly writeListeners: Array<(ms: number, ok: boolean) => void> = []
  private queuedBodyBytes = 0
  private readonly capacity: number
  private readonly bodyBudget: number
  private readonly batchSize: number
  private readonly batchBodyBytes: number
  private readonly flushIntervalMs: number
  private readonly now: () => number
  private timer: ReturnType<typeof setTimeout> | undefined
  private flushing: Promise<void> | undefined
  private readonly stats = { written: 0, dropped: 0, bodiesDropped: 0, setAside: 0, failedFlushes: 0 }
  /** Failed writes in a row: the pause before the next try grows with them. */
  private failuresInRow = 0
  private lastDropLog = 0
  private lastFailureLog = 0

  constructor(
    private readonly write: LogWriter,
    private readonly log: Logger,
    options: RequestLogOptions = {},
  ) {
    this.capacity = options.capacity ?? 50_000
    this.bodyBudget = options.bodyBudget ?? 64 * 1024 * 1024
    this.batchSize = options.batchSize ?? 1_000
    this.batchBodyBytes = options.batchBodyBytes ?? 2 * 1024 * 1024
    this.flushIntervalMs = options.flushIntervalMs ?? 50
    this.now = options.now ?? Date.now
  }

  record(entry: LogEntry): void {
    if (this.queue.length >= this.capacity) {
      this.stats.dropped += 1
      this.complain('request log queue full; records dropped')
      return
    }
    const bytes = bodyBytes(entry)
    const at = this.now()
    if (bytes > 0 && this.queuedBodyBytes + bytes > this.bodyBudget) {
      this.stats.bodiesDropped += 1
      this.complain('request log body budget spent; records kept without bodies')
      this.queue.push({ entry: { record: entry.record }, at })
    } else {
      this.queuedBodyBytes += bytes
      this.queue.push({ entry, at })
    }
    this.unwrittenRecords.set(entry.record.id, entry.record)
    this.addDebit(entry, 1)
    this.schedule()
  }

  /** A record queued or being written, by its id; undefined once the database has it (or never had it queued). */
  unwrittenRecord(id: string): RequestRecord | undefined {
    return this.unwrittenRecords.get(id)
  }

  /**
   * A full batch is written at once, a smaller one after the flush interval, for companions. While a flush is in
   * flight nothing is scheduled: its end schedules the next. (Starting a waiting flush for every record
   * of a full queue made each batch's end wake thousands of them: 8 % of the server's CPU at saturation.)
   */
  private schedule(): void {
    if (this.flushing || this.queue.length === 0) return
    if (this.queue.length >= this.batchSize || this.queuedBodyBytes >= this.batchBodyBytes) void this.flush()
    else this.timer ??= setTimeout(() => void this.flush(), this.flushIntervalMs)
  }

  /** What the queued records of an organisation will take from its credits once written (nano-USD). */
  unwrittenDebit(orgId: string): number {
    return this.unwritten.get(orgId) ?? 0
  }

  /** Called with the balances each written batch left, for caches of them. */
  onSettled(listener: (balances: SettledBalances) => void): void {
    this.settledListeners.push(listener)
  }

  /** Called after each batch write, written or failed, with how long it took (ms): for metrics. */
  onWrite(listener: (ms: number, ok: boolean) => void): void {
    this.writeListeners.push(listener)
  }

  private addDebit(entry: LogEntry, sign: 1 | -1): void {
    const debit = debitOf(entry)
    if (debit === 0) return
    const orgId = entry.record.orgId
    const left = (this.unwritten.get(orgId) ?? 0) + sign * debit
    if (left > 0) this.unwritten.set(orgId, left)
    else this.unwritten.delete(orgId)
  }

  private complain(message: string): void {
    const now = this.now()
    // One line a second at most: a full queue must be visible without flooding the log.
    if (now - this.lastDropLog < 1_000) return
    this.lastDropLog = now
    this.log.error(message, { dropped: this.stats.dropped, bodiesDropped: this.stats.bodiesDropped, capacity: this.capacity })
  }

  /** Writes what is queued now; concurrent calls share one flush at a time. */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
    while (this.flushing) await this.flushing
    if (this.queue.length === 0) return
    const batch = this.queue.slice(0, this.batchLength())
    let failed = false
    const began = performance.now()
    this.flushing = this.write(batch.map((queued) => writable(queued.entry)))
      .then((outcome) => {
        this.queue = this.queue.slice(batch.length)
        for (const { entry } of batch) {
          this.queuedBodyBytes -= bodyBytes(entry)
          this.addDebit(entry, -1)
          this.unwrittenRecords.delete(entry.record.id)
        }
        this.failuresInRow = 0
        const setAside = outcome?.setAside ?? []
        this.stats.written += batch.length - setAside.length
        this.stats.setAside += setAside.length
        for (const refused of setAside) {
          this.log.error('request record refused by the database; set aside in request_log_rejects', { ...refused })
        }
        if (outcome) for (const listener of this.settledListeners) listener(outcome.balances)
      })
      .catch((error: unknown) => {
        failed = true
        this.failuresInRow += 1
        this.stats.failedFlushes += 1
        // One line every ten seconds while the database is away: the outage is visible, the log not flooded.
        const now = this.now()
        if (now - this.lastFailureLog >= 10_000) {
          this.lastFailureLog = now
          this.log.error('request log write failed; the records are kept and retried', {
            queued: this.queue.length,
            failuresInRow: this.failuresInRow,
            error: errorMessage(error),
          })
        }
      })
      .finally(() => {
        this.flushing = undefined
        const ms = performance.now() - began
        for (const listener of this.writeListeners) listener(ms, !failed)
        // A failed batch is retried after a pause, not at once: the database may need a moment.
        if (failed) this.timer ??= setTimeout(() => void this.flush(), this.retryDelayMs())
        else this.schedule()
      })
    await this.flushing
  }

  private retryDelayMs(): number {
    return Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** Math.min(this.failuresInRow - 1, 10))
  }

  /** How many records from the front of the queue make the next batch: up to both bounds, at least one. */
  private batchLength(): number {
    let bytes = 0
    let length = 0
    while (length < this.queue.length && length < this.batchSize) {
      bytes += bodyBytes((this.queue[length] as Queued).entry)
      if (length > 0 && bytes > this.batchBodyBytes) break
      length += 1
    }
    return length
  }

  /** Writes everything queued, retrying failed batches a few times; for shutdown. */
  async drain(attempts = 5): Promise<void> {
    for (let i = 0; i < attempts && this.queue.length > 0; i++) {
      const before = this.stats.written
      await this.flush()
      if (this.stats.written === before && this.queue.length > 0)
        await new Promise((resolve) => setTimeout(resolve, 200 * (i + 1)))
    }
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
    if (this.queue.length > 0) this.log.error('request log records not written at shutdown', { records: this.queue.length })
  }

  snapshot(): RequestLogStats {
    const oldest = this.queue[0]
    return { ...this.stats, queued: this.queue.length, oldestQueuedMs: oldest ? Math.max(0, this.now() - oldest.at) : 0 }
  }
}
