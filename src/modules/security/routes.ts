import { Elysia, t } from 'elysia'
import type { Authz } from '../../http/authz'
import { Ok } from '../../http/schema'
import { Maybe, SeriesPoint, WindowBody, windowBodyWith } from '../../query/model'
import type { SecurityViews } from './service'

const Counts = t.Record(t.String(), t.Number())
const Summary = t.Object({
  flaggedRequests: t.Number({ description: 'requests with at least one finding' }),
  requests: t.Record(t.String(), t.Number(), { description: 'per category: the requests with a finding of it' }),
  occurrences: t.Record(t.String(), t.Number(), { description: 'per category: how often it was found' }),
})
const OverTime = t.Array(SeriesPoint({ flaggedRequests: t.Number(), values: Counts }))
const Recent = t.Array(
  t.Object({
    requestId: t.String(),
    createdAt: t.String({ format: 'date-time' }),
    model: t.String(),
    userId: Maybe(t.String()),
    findings: t.Record(t.String(), t.Number(), { description: 'per category: how often it was found; never the text' }),
  }),
)
const RecentBody = windowBodyWith({ limit: t.Optional(t.Integer({ minimum: 1, maximum: 500 })) })
const read = { catalogued: true as const }

/**
 * The security views (spec 4.6 `traffic.read`): personal data found in request bodies, and prompt-injection
 * attempts. The two threat metrics live here, not with the metric table, because they read the same flags.
 */
export const securityRoutes = (authz: Authz, security: SecurityViews) =>
  new Elysia({ name: 'security-routes' })
    .use(authz)
    .post(
      '/v1/security/pii/summary',
      async ({ principal, body }) => ({ data: await security.summary(principal, body, 'pii'), error: null }),
      {
        ...read,
        body: WindowBody,
        response: Ok(Summary),
        detail: { summary: 'Personal data found in request bodies, by kind (email, phone, card, secret): counts only' },
      },
    )
    .post(
      '/v1/security/pii/over-time',
      async ({ principal, body }) => ({ data: await security.overTime(principal, body, 'pii'), error: null }),
      {
        ...read,
        body: WindowBody,
        response: Ok(OverTime),
        detail: { summary: 'Per time bucket, the requests in which each kind of personal data was found' },
      },
    )
    .post(
      '/v1/security/pii/recent',
      async ({ principal, body }) => ({ data: await security.recent(principal, body, 'pii'), error: null }),
      {
        ...read,
        body: RecentBody,
        response: Ok(Recent),
        detail: { summary: 'The latest requests with personal data in their bodies (50 by default), newest first' },
      },
    )
    .post(
      '/v1/metrics/threatsOverTime',
      async ({ principal, body }) => ({ data: await security.overTime(principal, body, 'injection'), error: null }),
      {
        ...read,
        body: WindowBody,
        response: Ok(OverTime),
        detail: { summary: 'Per time bucket, the requests with prompt-injection attempts, in all and by rule' },
      },
    )
    .post(
      '/v1/metrics/totalThreats',
      async ({ principal, body }) => ({ data: await security.summary(principal, body, 'injection'), error: null }),
      {
        ...read,
        body: WindowBody,
        response: Ok(Summary),
        detail: { summary: 'Requests with prompt-injection attempts, in all and by rule' },
      },
    )
