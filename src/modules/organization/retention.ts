import type { Logger } from '../../log'
import { DAY_MS, type RecordRetention } from '../../spend/retention'
import { errorMessage } from '../../store/faults'
import { DATED_LOGS } from '../../store/repositories/log-retention'
import type { Repositories, Store } from '../../store/store'

/**
 * Rows one batch deletes at most, per dialect (bench/results/2026-11-26-retention-soak.md). On SQLite a
 * batch holds the one connection and the event loop: 500 records with their bodies and flags take 5 to
 * 8 ms (1,000: 13 ms). On Postgres 1,000 take 20 to 40 ms on a pooled connection; 5,000 took 260 to
 * 400 ms and slowed the log's writer on a small machine, deleting no faster.
 */
const BATCH_ROWS = { sqlite: 500, postgres: 1_000 } as const
/**
 * Between batches, at least this long and at least as long as the batch took: the request log's writer
 * and the calls in flight get the database (and on SQLite the event loop) at least half of the time.
 */
const PAUSE_MS = 10
/** The (organisation, budget, days) whose kept records were logged, so one line is not repeated every run. */
const TOLD_MAX = 10_000

export interface RetentionJobOptions {
  batchRows?: number
  pauseMs?: number
}

/** What one run deleted, and how long its longest batch took (waiting for the database included). */
export interface RetentionRun {
  records: number
  bodies: number
  /** Rows of the dated logs: set-aside records, budget actions, relayed calls. */
  logs: number
  batches: number
  longestBatchMs: number
  /** Stopped before it was done (shutdown); the next run takes up where it left off. */
  stopped: boolean
}

type Tally = Pick<RetentionRun, 'records' | 'bodies' | 'logs'>

/**
 * The retention job: each organisation's request records (with what hangs off them) and dated logs
 * past its record retention, and its bodies past its body retention, deleted off the request path in
 * short batches, oldest first. Runs of several instances on one database share the work (see
 * `logRetentionRepository`); a run on one instance never overlaps another of its own.
 */
export class RetentionJob {
  private readonly batchRows: number
  private readonly pauseMs: number
  private running: Promise<RetentionRun> | undefined
  private stopping = false
  private timers: Array<ReturnType<typeof setTimeout>> = []
  private readonly told = new Set<string>()

  constructor(
    private readonly deps: { store: Store; retention: RecordRetention; log: Logger; now?: () => number },
    options: RetentionJobOptions = {},
  ) {
    this.batchRows = options.batchRows ?? BATCH_ROWS[deps.store.dialect]
    this.pauseMs = options.pauseMs ?? PAUSE_MS
  }

  /** Runs after `firstMs` (soon after start-up, so frequent restarts do not starve it), then every `everyMs`. */
  start(firstMs: number, everyMs: number): void {
    const tick = () => {
      this.run()
        .then((run) => {
          if (run.records + run.bodies + run.logs > 0)
            this.deps.log.info('retention: rows deleted', { ...run, longestBatchMs: Math.round(run.longestBatchMs) })
        })
        .catch((error: unknown) =>
          this.deps.log.error('retention job failed; it runs again later', { error: errorMessage(error) }),
        )
    }
    this.timers.push(
      setTimeout(() => {
        tick()
        this.timers.push(setInterval(tick, everyMs))
      }, firstMs),
    )
  }

  /** No new run starts; the batch in flight finishes (a batch is one transaction), and then this resolves. */
  async stop(): Promise<void> {
    this.stopping = true
    for (const timer of this.timers) clearTimeout(timer)
    this.timers = []
    await this.running?.catch(() => undefined)
  }

  /** One pass over every organisation; a call while one is under way joins it. */
  run(): Promise<RetentionRun> {
    this.running ??= this.pass().finally(() => {
      this.running = undefined
    })
    return this.running
  }

  private async pass(): Promise<RetentionRun> {
    const run: RetentionRun = { records: 0, bodies: 0, logs: 0, batches: 0, longestBatchMs: 0, stopped: false }
    for (const orgId of await this.deps.store.organizations.listIds()) {
      if (this.stopping) break
      await this.sweep(orgId, run)
    }
    run.stopped = this.stopping
    return run
  }

  private async sweep(orgId: string, run: RetentionRun): Promise<void> {
    const org = this.deps.store.org(orgId)
    const [settings, limits] = await Promise.all([org.settings.get(), org.budgetLimits.list()])
    const now = (this.deps.now ?? Date.now)()
    const records = this.deps.retention.cutoff(settings, limits, now)
    if (records) {
      if (records.heldBy) this.tell(orgId, records.days, records.heldBy.id, records.cutoff)
      const { cutoff } = records
      await this.batches(run, 'records', (tx) => tx.org(orgId).logRetention.deleteRecordsBefore(cutoff, this.batchRows))
      for (const log of DATED_LOGS)
        await this.batches(run, 'logs', (tx) => tx.org(orgId).logRetention.deleteLogBefore(log, cutoff, this.batchRows))
    }
    const days = settings.bodyRetentionDays
    // "none": no body is kept, those stored before included.
    const bodies = new Date(days === null ? now + DAY_MS : now - days * DAY_MS)
    await this.batches(run, 'bodies', (tx) => tx.org(orgId).logRetention.deleteBodiesBefore(bodies, this.batchRows))
  }

  /** Batches until one comes back short, each its own transaction, with a pause after each (see PAUSE_MS). */
  private async batches(run: RetentionRun, what: keyof Tally, batch: (tx: Repositories) => Promise<number>): Promise<void> {
    while (!this.stopping) {
      const started = performance.now()
      const deleted = await this.deps.store.transaction(batch)
      const took = performance.now() - started
      run.longestBatchMs = Math.max(run.longestBatchMs, took)
      run.batches += 1
      run[what] += deleted
      if (deleted < this.batchRows) return
      await new Promise((resolve) => setTimeout(resolve, Math.max(this.pauseMs, took)))
    }
  }

  /** Once per organisation, budget and retention: records are kept past the retention for a budget's window. */
  private tell(orgId: string, days: number, limitId: string, keptFrom: Date): void {
    const key = `${orgId}|${limitId}|${days}`
    if (this.told.has(key)) return
    if (this.told.size >= TOLD_MAX) this.told.clear()
    this.told.add(key)
    this.deps.log.warn('retention: records kept longer than the retention, for a budget window that counts them', {
      orgId,
      retentionDays: days,
      budget: limitId,
      keptFrom: keptFrom.toISOString(),
    })
  }
}
