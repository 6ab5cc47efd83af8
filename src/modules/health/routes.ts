import { Elysia, status } from 'elysia'
import { HealthReport } from './model'
import type { HealthService } from './service'

/** `GET /healthcheck` (spec 4.1): no authentication, no secrets; 503 when a component the server needs is down. */
export const healthRoutes = (health: HealthService) =>
  new Elysia({ name: 'health' }).get(
    '/healthcheck',
    async () => {
      const report = await health.report()
      return report.status === 'down' ? status(503, report) : report
    },
    {
      response: { 200: HealthReport, 503: HealthReport },
      detail: { summary: 'Health of the server and its components' },
    },
  )
