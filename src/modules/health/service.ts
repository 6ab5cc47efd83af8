import type { ComponentState, HealthProbe } from '../../util/health-probe'
import { VERSION } from '../../version'
import type { HealthReport } from './model'

export type { ComponentState, HealthProbe }

/** The request log's queue as the health check sees it (the gateway's RequestLog answers this). */
export interface RequestLogGauge {
  snapshot(): { queued: number; oldestQueuedMs: number; setAside: number; dropped: number; failedFlushes: number }
}

const PROBE_TIMEOUT_MS = 2_000
/**
 * Records are written within a batch interval (50 ms) when all is well; one that has waited this long
 * means the database is away or slow, and the operator should know before the queue fills.
 */
export const REQUEST_LOG_LAG_MS = 5_000

async function run(probe: HealthProbe): Promise<ComponentState> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<ComponentState>((resolve) => {
    timer = setTimeout(() => resolve('down'), PROBE_TIMEOUT_MS)
  })
  try {
    return await Promise.race([probe.check().catch((): ComponentState => 'down'), timeout])
  } finally {
    clearTimeout(timer)
  }
}

export class HealthService {
  private readonly startedAt: number

  constructor(
    private readonly probes: readonly HealthProbe[],
    private readonly requestLog?: RequestLogGauge,
    private readonly now: () => number = Date.now,
  ) {
    this.startedAt = now()
  }

  /** The report and the HTTP status it is answered with: 503 when a component the server needs is down. */
  async answer(): Promise<{ httpStatus: 200 | 503; report: HealthReport }> {
    const report = await this.report()
    return { httpStatus: report.status === 'down' ? 503 : 200, report }
  }

  async report(): Promise<HealthReport> {
    const states = await Promise.all(this.probes.map(run))
    const checked = this.probes.map((probe, i) => ({ name: probe.name, required: probe.required, state: states[i] ?? 'down' }))
    let requestLog: HealthReport['requestLog']
    if (this.requestLog) {
      const log = this.requestLog.snapshot()
      // A stalled log still serves calls (records wait in memory): it degrades the server, never downs it.
      checked.push({ name: 'request_log', required: false, state: log.oldestQueuedMs > REQUEST_LOG_LAG_MS ? 'degraded' : 'ok' })
      requestLog = {
        queued: log.queued,
        oldestQueuedSeconds: Math.floor(log.oldestQueuedMs / 1000),
        setAside: log.setAside,
        dropped: log.dropped,
        failedWrites: log.failedFlushes,
      }
    }
    const unwell = (c: (typeof checked)[number]) => c.state === 'down' || c.state === 'degraded'
    const status: HealthReport['status'] = checked.some((c) => c.required && c.state === 'down')
      ? 'down'
      : checked.some(unwell)
        ? 'degraded'
        : 'ok'
    return {
      status,
      version: VERSION,
      uptimeSeconds: Math.floor((this.now() - this.startedAt) / 1000),
      components: Object.fromEntries(checked.map((c) => [c.name, c.state])),
      ...(requestLog ? { requestLog } : {}),
    }
  }
}
