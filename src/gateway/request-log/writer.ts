import { meterDeliveries, requestCompletedDeliveries } from '../../egress/events'
import { redactPii } from '../../security/pii'
import { scanRequestBody } from '../../security/scan'
import type { DatabaseLocation } from '../../store/database'
import { errorMessage, storeFault } from '../../store/faults'
import type { CallAttempt } from '../../store/json-columns'
import type { RequestBodyRecord } from '../../store/repositories/request-bodies'
import type { RequestFlag } from '../../store/repositories/request-flags'
import type { RequestRecord } from '../../store/repositories/requests'
import type { Repositories, Store } from '../../store/store'
import {
  debitOf,
  type LogWriter,
  type SetAside,
  type SettledBalances,
  type WritableEntry,
  type WriteOutcome,
} from './request-log'

/** The record's fields that hold text (some of it from callers and providers). */
const RECORD_TEXT_FIELDS = [
  'id',
  'orgId',
  'apiKeyId',
  'userId',
  'sessionId',
  'customerId',
  'stripeCustomerId',
  'provider',
  'model',
  'path',
  'translationWarning',
  'costNote',
  'error',
  'country',
  'fallbackChainId',
  'downgradedFrom',
  'memberId',
  'priceSource',
] as const satisfies ReadonlyArray<keyof RequestRecord>
type TextField = { [K in keyof RequestRecord]: RequestRecord[K] extends string | null ? K : never }[keyof RequestRecord]
// A text field added to RequestRecord and not to the list above fails to compile here (gw's own
// enumerations, the mode and the status, hold no caller's text).
const everyTextField: Exclude<TextField, (typeof RECORD_TEXT_FIELDS)[number] | 'gatewayMode' | 'status'> extends never
  ? true
  : never = true
void everyTextField

/** An attempt's text: its error is often the provider's own words, which may repeat what the caller sent. */
const ATTEMPT_TEXT_FIELDS = ['provider', 'model', 'error'] as const satisfies ReadonlyArray<keyof CallAttempt>

const holdsNul = (text: string | null | undefined): boolean => text?.includes('\u0000') === true
const attemptHoldsNul = (attempt: CallAttempt): boolean => ATTEMPT_TEXT_FIELDS.some((field) => holdsNul(attempt[field]))

/**
 * Text as the database can hold it: Postgres refuses NUL in a text column and in JSON (SQLite takes
 * it), so it becomes U+FFFD. What the caller sends is refused at the edge when it holds one; this is
 * for what reaches a record otherwise (a provider's error message, a raw body that was not JSON).
 */
const storable = (text: string): string => (text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text)

const storableAttempt = (attempt: CallAttempt): CallAttempt => {
  if (!attemptHoldsNul(attempt)) return attempt
  const copy = { ...attempt, provider: storable(attempt.provider), model: storable(attempt.model) }
  if (attempt.error !== undefined) copy.error = storable(attempt.error)
  return copy
}

const storableRecord = (record: RequestRecord): RequestRecord => {
  const inText = RECORD_TEXT_FIELDS.some((field) => holdsNul(record[field]))
  if (!inText && !record.attempts?.some(attemptHoldsNul)) return record
  const copy = { ...record }
  for (const field of RECORD_TEXT_FIELDS) {
    const value = copy[field]
    if (value !== null) copy[field] = storable(value)
  }
  if (copy.attempts) copy.attempts = copy.attempts.map(storableAttempt)
  return copy
}

/**
 * What a log entry becomes in the database: its record, the security flags of the request body
 * (always), and the bodies, redacted or not, when the organisation keeps them.
 */
export function rowsOf({ record: raw, bodies }: WritableEntry): {
  record: RequestRecord
  body?: RequestBodyRecord
  flags: RequestFlag[]
} {
  const record = storableRecord(raw)
  if (!bodies) return { record, flags: [] }
  const flags = scanRequestBody(bodies.request).map((finding) => ({
    ...finding,
    requestId: record.id,
    orgId: record.orgId,
    createdAt: record.createdAt,
  }))
  if (!bodies.policy.store) return { record, flags }
  const keep = (text: string) => storable(bodies.policy.redact ? redactPii(text).text : text)
  return {
    record,
    flags,
    body: {
      requestId: record.id,
      orgId: record.orgId,
      requestBody: keep(bodies.request),
      responseBody: keep(bodies.response),
      truncated: bodies.truncated,
      createdAt: record.createdAt,
    },
  }
}

/**
 * The outbox events of the records a batch wrote, put there in the batch's own transaction: an event
 * exists exactly when its record does, and is sent later by the deliverer, never on the answer's path.
 * `request.completed` goes to the webhooks that take it (bodies only to those that ask, redacted as
 * the organisation's policy says); a call that named a Stripe customer becomes a meter event for its
 * organisation's Stripe integration.
 */
async function enqueueEvents(tx: Repositories, written: readonly WritableEntry[], at: Date): Promise<void> {
  const orgIds = [...new Set(written.map((entry) => entry.record.orgId))]
  const hooks = await tx.deliveries.subscribers(orgIds, 'request.completed')
  const metered = written.filter((entry) => entry.record.stripeCustomerId !== null).map((entry) => entry.record)
  const stripes = metered.length > 0 ? await tx.deliveries.activeIntegrations(orgIds, 'stripe') : []
  const wantBodies = new Set(hooks.filter((hook) => hook.includeData).map((hook) => hook.orgId))
  const events =
    hooks.length === 0
      ? []
      : written.map(({ record, bodies }) => ({
          record: storableRecord(record),
          bodies:
            bodies && wantBodies.has(record.orgId)
              ? {
                  request: bodies.policy.redact ? redactPii(bodies.request).text : bodies.request,
                  response: bodies.policy.redact ? redactPii(bodies.response).text : bodies.response,
                  truncated: bodies.truncated,
                }
              : undefined,
        }))
  const deliveries = [...requestCompletedDeliveries(hooks, events, at), ...meterDeliveries(stripes, metered, at)]
  if (deliveries.length > 0) await tx.deliveries.enqueue(deliveries)
}

/**
 * How a writer shares the machine's cores with the server's thread. A batch at 1,000 calls a second
 * is some 50 records and one or two milliseconds of work in one go; meanwhile the threads a call is
 * made of (the server's loop, the runtime's HTTP client) can wait for the core the writer holds, up to
 * the kernel's time slice, and on a two-core machine that wait was most of gw's added p99. Pausing for
 * a moment every few records lets a waiting thread run at once (bench/results/2026-11-28-writer-pacing.md).
 * A larger batch means the log is busy or behind, and is written without pauses: keeping up comes first.
 */
export interface Pacing {
  /** Records written between two pauses. */
  every: number
  /** The largest batch that is paced. */
  upTo: number
  /** Stops this thread for tens of microseconds: some pauses fall inside the batch's open transaction. */
  pause(): void
}

/** `work` on `items` a part at a time with a pause between parts, or on all of them at once unpaced. */
async function inParts<T, R>(
  items: readonly T[],
  pacing: Pacing | undefined,
  work: (part: readonly T[]) => R | Promise<R>,
): Promise<R[]> {
  if (!pacing) return [await work(items)]
  const results: R[] = []
  for (let at = 0; at < items.length; at += pacing.every) {
    if (at > 0) pacing.pause()
    results.push(await work(items.slice(at, at + pacing.every)))
  }
  return results
}

/**
 * Writes one batch in one transaction. Records whose id is in the log already are skipped with their
 * bodies, flags and charge: a batch retried after a commit whose answer was lost takes nothing twice.
 * The credits of pass-through-billed calls are taken here, with their records: one UPDATE per
 * organisation per batch, instead of one per call on the answer's path. A lost record can then never
 * have been charged, nor a charge lack its record.
 */
async function writeBatch(store: Store, entries: readonly WritableEntry[], at: Date, pacing?: Pacing): Promise<SettledBalances> {
  const rows = (await inParts(entries, pacing, (part) => part.map(rowsOf))).flat()
  return store.transaction(async (tx): Promise<SettledBalances> => {
    const written = new Set<string>()
    for (const ids of await inParts(rows, pacing, (part) => tx.requests.insertMany(part.map((r) => r.record))))
      for (const id of ids) written.add(id)
    const fresh = rows.filter((r) => written.has(r.record.id))
    await enqueueEvents(
      tx,
      entries.filter((entry) => written.has(entry.record.id)),
      at,
    )
    const bodies = fresh.flatMap((r) => (r.body ? [r.body] : []))
    if (bodies.length > 0) await inParts(bodies, pacing, (part) => tx.requestBodies.insertMany(part))
    const flags = fresh.flatMap((r) => r.flags)
    if (flags.length > 0) await tx.requestFlags.insertMany(flags)
    const debits = new Map<string, number>()
    for (const { record } of fresh) {
      const debit = debitOf({ record })
      if (debit > 0) debits.set(record.orgId, (debits.get(record.orgId) ?? 0) + debit)
    }
    const balances = new Map<string, number>()
    for (const [orgId, debit] of debits) {
      const balance = await tx.organizations.addCredits(orgId, -debit)
      if (balance !== undefined) balances.set(orgId, balance)
    }
    return balances
  })
}

/**
 * The request log's writer over a store. A batch the database refuses for its values (not for being
 * away) is split in halves and each half written on its own, down to the one record at fault, which
 * is set aside in `request_log_rejects` with the reason: good records are written, a bad one is never
 * retried, and none is dropped silently. Halves already written are skipped when a batch is tried
 * again, so a split that stops half-way (the database went away) loses and doubles nothing. When the
 * database is unreachable the batch fails whole, and the log keeps it for later.
 */
export const writeEntries =
  (store: Store, now: () => number = Date.now, pacing?: Pacing): LogWriter =>
  async (entries) => {
    const paced = pacing && entries.length <= pacing.upTo ? pacing : undefined
    const balances = new Map<string, number>()
    const setAside: SetAside[] = []
    const write = async (part: readonly WritableEntry[]): Promise<void> => {
      try {
        const written = await writeBatch(store, part, new Date(now()), paced)
        for (const [orgId, balance] of written) balances.set(orgId, balance)
      } catch (error) {
        if (storeFault(error) === 'unavailable') throw error
        const [only] = part
        if (part.length === 1 && only) {
          const reason = errorMessage(error)
          await store.requestRejects.add({
            requestId: only.record.id,
            orgId: only.record.orgId,
            error: storable(reason),
            record: JSON.stringify(only.record),
            createdAt: new Date(now()),
          })
          setAside.push({ requestId: only.record.id, orgId: only.record.orgId, error: reason })
          return
        }
        const half = Math.ceil(part.length / 2)
        await write(part.slice(0, half))
        await write(part.slice(half))
      }
    }
    await write(entries)
    return { balances, setAside }
  }

/** A record's fields in the order a wire entry carries their values. */
const RECORD_FIELDS = [
  'id',
  'orgId',
  'apiKeyId',
  'userId',
  'sessionId',
  'customerId',
  'stripeCustomerId',
  'memberId',
  'properties',
  'provider',
  'model',
  'path',
  'gatewayMode',
  'translationWarning',
  'status',
  'httpStatus',
  'latencyMs',
  'timeToFirstTokenMs',
  'promptTokens',
  'completionTokens',
  'cacheReadTokens',
  'cacheWriteTokens',
  'totalTokens',
  'costNano',
  'costNote',
  'priceSource',
  'estimatedCostNano',
  'ptb',
  'error',
  'country',
  'attempts',
  'cached',
  'fallbackChainId',
  'cacheSavedNano',
  'downgradedFrom',
  'creditsRemainingNano',
  'createdAt',
] as const satisfies ReadonlyArray<keyof RequestRecord>
// A field added to RequestRecord and not to the list above fails to compile here.
const everyField: Exclude<keyof RequestRecord, (typeof RECORD_FIELDS)[number]> extends never ? true : never = true
void everyField

const CREATED_AT = RECORD_FIELDS.indexOf('createdAt')

/**
 * An entry as it crosses to the writer thread: the record's values in RECORD_FIELDS order (its time as
 * milliseconds), then, when it has them, its bodies and their policy. Flat arrays, not objects, so no
 * record writes its keys out again.
 */
type WireEntry = unknown[]

function toWire({ record, bodies }: WritableEntry): WireEntry {
  const wire = new Array<unknown>(RECORD_FIELDS.length)
  for (let i = 0; i < RECORD_FIELDS.length; i++) wire[i] = record[RECORD_FIELDS[i] as keyof RequestRecord]
  wire[CREATED_AT] = record.createdAt.getTime()
  if (bodies) wire.push(bodies.request, bodies.response, bodies.truncated, bodies.policy.store, bodies.policy.redact)
  return wire
}

function fromWire(wire: WireEntry): WritableEntry {
  // Assigned one by one: building it with Object.fromEntries made a pair for each field, 6 µs a record.
  const fields: Record<string, unknown> = {}
  for (let i = 0; i < RECORD_FIELDS.length; i++) fields[RECORD_FIELDS[i] as string] = wire[i]
  fields.createdAt = new Date(wire[CREATED_AT] as number)
  const record = fields as unknown as RequestRecord
  if (wire.length === RECORD_FIELDS.length) return { record }
  const [request, response, truncated, store, redact] = wire.slice(RECORD_FIELDS.length) as [
    string,
    string,
    boolean,
    boolean,
    boolean,
  ]
  return { record, bodies: { request, response, truncated, policy: { store, redact } } }
}

/**
 * A batch as its one JSON text: the server's thread writes a text of about a kilobyte a record, where a
 * structured clone of the same arrays took twice the time there and left about 500 bytes a record for
 * its collector (measured with a 100-record batch).
 */
export const batchText = (entries: readonly WritableEntry[]): string => JSON.stringify(entries.map(toWire))

export const entriesOf = (text: string): WritableEntry[] => (JSON.parse(text) as WireEntry[]).map(fromWire)

/** The messages between the server and its log-writer thread: open the database, write a batch (its text), close. */
export type WriterRequest = { id: number; open: DatabaseLocation } | { id: number; entries: string } | { id: number; close: true }
export type WriterReply = { id: number; balances?: Array<[string, number]>; setAside?: SetAside[]; error?: string }

/**
 * The writer thread's file. From source, it sits beside this file. In the executable (whose main module
 * lives under /$bunfs/), every entrypoint is laid out as under src/ (scripts/build.ts lists this one)
 * and a relative name resolves from there; `import.meta.url` cannot tell, since a bytecode build
 * reports the source path.
 */
const WORKER_FILE = Bun.main.startsWith('/$bunfs/')
  ? './gateway/request-log/writer.worker.ts'
  : new URL('./writer.worker.ts', import.meta.url).href

/**
 * The request log's writer on a thread of its own (`writer.worker.ts`), with its own connection
 * to the database: the server's event loop never waits for a batch, its scan or its commit. With
 * SQLite that wait is synchronous, and it was up to 70 ms a batch under load (the overhead profile).
 */
export class ThreadedLogWriter {
  private thread: { worker: Worker; opened: Promise<WriteOutcome> } | undefined
  private readonly waiting = new Map<number, { resolve: (outcome: WriteOutcome) => void; reject: (e: Error) => void }>()
  private next = 0

  constructor(private readonly database: DatabaseLocation) {}

  /** Starts the thread now and waits for its connection; otherwise the first batch starts it. */
  async start(): Promise<void> {
    await this.running().opened
  }

  /** The `LogWriter` that hands batches to the thread. */
  readonly write: LogWriter = async (entries) => {
    const { worker, opened } = this.running()
    await opened
    return this.send(worker, { id: ++this.next, entries: batchText(entries) })
  }

  /** Closes the thread's connection and ends it; call it once the log is drained. */
  async close(): Promise<void> {
    const thread = this.thread
    this.thread = undefined
    if (!thread) return
    await this.send(thread.worker, { id: ++this.next, close: true }).catch(() => undefined)
    thread.worker.terminate()
  }

  /**
   * The thread, started when first needed (so it does not compete with the server's start-up). One
   * that died or could not open the database is dropped: the batch fails and is kept by the log, and
   * the retry starts a new thread.
   */
  private running(): { worker: Worker; opened: Promise<WriteOutcome> } {
    if (this.thread) return this.thread
    const worker = new Worker(WORKER_FILE)
    const drop = () => {
      if (this.thread?.worker !== worker) return
      this.thread = undefined
      worker.terminate()
    }
    worker.addEventListener('message', (event: MessageEvent<WriterReply>) => {
      const { id, balances, setAside, error } = event.data
      const waiter = this.waiting.get(id)
      this.waiting.delete(id)
      if (error !== undefined) waiter?.reject(new Error(error))
      else waiter?.resolve({ balances: new Map(balances ?? []), setAside: setAside ?? [] })
    })
    worker.addEventListener('error', (event) => {
      for (const waiter of this.waiting.values()) waiter.reject(new Error(`log writer thread failed: ${event.message}`))
      this.waiting.clear()
      drop()
    })
    const opened = this.send(worker, { id: ++this.next, open: this.database })
    opened.catch(drop)
    this.thread = { worker, opened }
    return this.thread
  }

  private send(worker: Worker, request: WriterRequest): Promise<WriteOutcome> {
    return new Promise((resolve, reject) => {
      this.waiting.set(request.id, { resolve, reject })
      worker.postMessage(request)
    })
  }
}
