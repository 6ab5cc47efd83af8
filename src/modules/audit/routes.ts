import { Elysia, t } from 'elysia'
import type { Authz } from '../../http/authz'
import { type AuditService, MAX_PAGE } from './service'

const Filter = t.Object(
  {
    action: t.Optional(t.String({ maxLength: 200 })),
    actorId: t.Optional(t.String({ maxLength: 200 })),
    from: t.Optional(t.String({ description: 'ISO 8601 date-time, inclusive' })),
    to: t.Optional(t.String({ description: 'ISO 8601 date-time, inclusive' })),
    cursor: t.Optional(t.String({ maxLength: 200 })),
    limit: t.Optional(t.Numeric({ minimum: 1, maximum: MAX_PAGE })),
  },
  { additionalProperties: false },
)
const OrgParams = t.Object({ id: t.String() })

/** The audit log (spec 4.6 `audit.read`): read a page at a time, or export as CSV. */
export const auditRoutes = (authz: Authz, audit: AuditService) =>
  new Elysia({ name: 'audit-routes' })
    .use(authz)
    .get(
      '/v1/organization/:id/audit',
      async ({ principal, query }) => ({ data: await audit.page(principal, query), error: null }),
      {
        permission: 'audit.read',
        params: OrgParams,
        query: Filter,
        detail: { summary: 'Audit entries, newest first; page with nextCursor' },
      },
    )
    .get(
      '/v1/organization/:id/audit.csv',
      ({ principal, query }) => {
        const rows = audit.csv(principal, query)
        const encoder = new TextEncoder()
        const body = new ReadableStream<Uint8Array>({
          async pull(controller) {
            const next = await rows.next()
            if (next.done) controller.close()
            else controller.enqueue(encoder.encode(next.value))
          },
        })
        return new Response(body, {
          headers: { 'content-type': 'text/csv; charset=utf-8', 'content-disposition': 'attachment; filename="audit.csv"' },
        })
      },
      { permission: 'audit.read', params: OrgParams, query: Filter, detail: { summary: 'The audit log as CSV (RFC 4180)' } },
    )
