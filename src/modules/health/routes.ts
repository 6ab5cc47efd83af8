import { Elysia } from 'elysia'
import type { HealthService } from './service'

/** `GET /healthcheck` (spec 4.1): no authentication, no secrets; 503 when a component the server needs is down. */
export const healthRoutes = (health: HealthService) =>
  new Elysia({ name: 'health' }).get(
    '/healthcheck',
    async ({ set }) => {
      const report = await health.report()
      set.status = report.status === 'down' ? 503 : 200
      return report
    },
    { detail: { summary: 'Health of the server and its components' } },
  )
