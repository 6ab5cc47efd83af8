import { COMPONENT_STATES } from '../../util/health-probe'
import { oneOf, t } from '../../util/typebox'

const ComponentState = oneOf(COMPONENT_STATES)
const Count = t.Integer({ minimum: 0 })

/** The health check's answer, sent as it is (not in the `{data, error}` envelope), with 200 or, when `down`, 503. */
export const HealthReport = t.Object({
  status: t.Union([t.Literal('ok'), t.Literal('degraded'), t.Literal('down')]),
  version: t.String(),
  uptimeSeconds: Count,
  components: t.Record(t.String(), ComponentState, { description: 'each component by name: database, redis, request_log, ...' }),
  requestLog: t.Optional(
    t.Object(
      {
        queued: Count,
        oldestQueuedSeconds: Count,
        setAside: Count,
        dropped: Count,
        failedWrites: Count,
      },
      { description: 'records waiting to be written, how long the oldest has waited, and the ones set aside or dropped so far' },
    ),
  ),
})
export type HealthReport = typeof HealthReport.static
