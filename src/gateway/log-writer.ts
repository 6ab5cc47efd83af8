import type { Config } from '../config'
import { redactPii } from '../security/pii'
import { scanRequestBody } from '../security/scan'
import type { RequestBodyRecord } from '../store/repositories/request-bodies'
import type { RequestFlag } from '../store/repositories/request-flags'
import type { Store } from '../store/store'
import { debitOf, type LogWriter, type SettledBalances, type WritableEntry } from './request-log'

/**
 * What a log entry becomes in the database besides its record: the security flags of the request
 * body (always), and the bodies, redacted or not, when the organisation keeps them.
 */
export function rowsOf({ record, bodies }: WritableEntry): { body?: RequestBodyRecord; flags: RequestFlag[] } {
  if (!bodies) return { flags: [] }
  const flags = scanRequestBody(bodies.request).map((finding) => ({
    ...finding,
    requestId: record.id,
    orgId: record.orgId,
    createdAt: record.createdAt,
  }))
  if (!bodies.policy.store) return { flags }
  const keep = (text: string) => (bodies.policy.redact ? redactPii(text).text : text)
  return {
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
 * Writes a batch atomically, so a retried batch never meets half of itself already in the tables. The
 * credits of pass-through-billed calls are taken here, with their records: one UPDATE per organisation
 * per batch, instead of one per call on the answer's path. A lost record can then never have been
 * charged, nor a charge lack its record.
 */
export const writeEntries =
  (store: Store): LogWriter =>
  (entries) => {
    const rows = entries.map(rowsOf)
    const debits = new Map<string, number>()
    for (const entry of entries) {
      const debit = debitOf(entry)
      if (debit > 0) debits.set(entry.record.orgId, (debits.get(entry.record.orgId) ?? 0) + debit)
    }
    return store.transaction(async (tx): Promise<SettledBalances> => {
      await tx.requests.insertMany(entries.map((e) => e.record))
      const bodies = rows.flatMap((r) => (r.body ? [r.body] : []))
      if (bodies.length > 0) await tx.requestBodies.insertMany(bodies)
      const flags = rows.flatMap((r) => r.flags)
      if (flags.length > 0) await tx.requestFlags.insertMany(flags)
      const balances = new Map<string, number>()
      for (const [orgId, debit] of debits) {
        const balance = await tx.organizations.addCredits(orgId, -debit)
        if (balance !== undefined) balances.set(orgId, balance)
      }
      return balances
    })
  }

/** The messages between the server and its log-writer thread: open the database, write a batch, close. */
export type WriterRequest =
  | { id: number; open: Config['database'] }
  | { id: number; entries: readonly WritableEntry[] }
  | { id: number; close: true }
export type WriterReply = { id: number; balances?: Array<[string, number]>; error?: string }

/**
 * The request log's writer on a thread of its own (`log-writer.worker.ts`), with its own connection
 * to the database: the server's event loop never waits for a batch, its scan or its commit. With
 * SQLite that wait is synchronous, and it was up to 70 ms a batch under load (issue 8's profile).
 */
/**
 * The writer thread's file. From source, it sits beside this file. In the executable, every entrypoint
 * is laid out as under src/ (scripts/build.ts lists this one) and a relative name resolves from there;
 * `import.meta.url` would name the single bundle instead.
 */
const WORKER_FILE = import.meta.url.includes('/$bunfs/')
  ? './gateway/log-writer.worker.ts'
  : new URL('./log-writer.worker.ts', import.meta.url).href

export class ThreadedLogWriter {
  private readonly worker: Worker
  private readonly waiting = new Map<number, { resolve: (b: SettledBalances) => void; reject: (e: Error) => void }>()
  private next = 0
  private readonly opened: Promise<SettledBalances>

  constructor(database: Config['database']) {
    this.worker = new Worker(WORKER_FILE)
    this.worker.addEventListener('message', (event: MessageEvent<WriterReply>) => {
      const { id, balances, error } = event.data
      const waiter = this.waiting.get(id)
      this.waiting.delete(id)
      if (error !== undefined) waiter?.reject(new Error(error))
      else waiter?.resolve(new Map(balances ?? []))
    })
    // A thread that died takes its batches with it: they fail, and the log keeps them for a retry.
    this.worker.addEventListener('error', (event) => {
      for (const waiter of this.waiting.values()) waiter.reject(new Error(`log writer thread failed: ${event.message}`))
      this.waiting.clear()
    })
    this.opened = this.send({ id: 0, open: database })
  }

  /** Resolves once the thread has its connection; rejects with why it could not open one. */
  async start(): Promise<void> {
    await this.opened
  }

  /** The `LogWriter` that hands batches to the thread. */
  readonly write: LogWriter = async (entries) => {
    await this.opened
    return this.send({ id: ++this.next, entries })
  }

  /** Closes the thread's connection and ends it; call it once the log is drained. */
  async close(): Promise<void> {
    await this.send({ id: ++this.next, close: true }).catch(() => undefined)
    this.worker.terminate()
  }

  private send(request: WriterRequest): Promise<SettledBalances> {
    return new Promise((resolve, reject) => {
      this.waiting.set(request.id, { resolve, reject })
      this.worker.postMessage(request)
    })
  }
}
