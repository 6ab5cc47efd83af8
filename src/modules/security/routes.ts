import { Elysia } from 'elysia'
import { answer } from '../../http/answer'
import type { Authz } from '../../http/authz'
import { Ok } from '../../http/schema'
import { WindowBody } from '../../query/model'
import { OverTime, Recent, RecentBody, Summary } from './model'
import type { SecurityViews } from './service'

const read = { catalogued: true as const }

/**
 * The security views (spec 4.6 `traffic.read`): personal data found in request bodies, and prompt-injection
 * attempts. The two threat metrics live here, not with the metric table, because they read the same flags.
 */
export const securityRoutes = (authz: Authz, security: SecurityViews) =>
  new Elysia({ name: 'security-routes' })
    .use(authz)
    .post('/v1/security/pii/summary', ({ principal, body }) => answer(security.summary(principal, body, 'pii')), {
      ...read,
      body: WindowBody,
      response: Ok(Summary),
      detail: { summary: 'Personal data found in request bodies, by kind (email, phone, card, secret): counts only' },
    })
    .post('/v1/security/pii/over-time', ({ principal, body }) => answer(security.overTime(principal, body, 'pii')), {
      ...read,
      body: WindowBody,
      response: Ok(OverTime),
      detail: { summary: 'Per time bucket, the requests in which each kind of personal data was found' },
    })
    .post('/v1/security/pii/recent', ({ principal, body }) => answer(security.recent(principal, body, 'pii')), {
      ...read,
      body: RecentBody,
      response: Ok(Recent),
      detail: { summary: 'The latest requests with personal data in their bodies (50 by default), newest first' },
    })
    .post('/v1/metrics/threatsOverTime', ({ principal, body }) => answer(security.overTime(principal, body, 'injection')), {
      ...read,
      body: WindowBody,
      response: Ok(OverTime),
      detail: { summary: 'Per time bucket, the requests with prompt-injection attempts, in all and by rule' },
    })
    .post('/v1/metrics/totalThreats', ({ principal, body }) => answer(security.summary(principal, body, 'injection')), {
      ...read,
      body: WindowBody,
      response: Ok(Summary),
      detail: { summary: 'Requests with prompt-injection attempts, in all and by rule' },
    })
