import { Elysia, status } from 'elysia'
import { HealthReport } from './model'
import type { HealthService } from './service'

/**
 * `GET /healthcheck` (spec 4.1): no authentication, no secrets; 503 when a component the server needs
 * is down. `gw serve` answers it before this app is built (serve.ts), with the same answer; this route
 * documents it and serves the app in process.
 */
export const healthRoutes = (health: HealthService) =>
  new Elysia({ name: 'health' }).get(
    '/healthcheck',
    async () => {
      const { httpStatus, report } = await health.answer()
      return httpStatus === 503 ? status(503, report) : report
    },
    {
      response: { 200: HealthReport, 503: HealthReport },
      detail: { summary: 'Health of the server and its components' },
    },
  )
