import { Elysia } from 'elysia'
import { answer } from '../../http/answer'
import type { Authz } from '../../http/authz'
import { Ok } from '../../http/schema'
import { AuditCsv, AuditPage, ExportQuery, OrgParams, PageQuery } from './model'
import { type AuditService, EXPORT_LIMITS } from './service'

/** `20260101T000000Z`: an instant that is safe in a file name on every system. */
const fileStamp = (at: Date) => at.toISOString().replace(/\.\d+/, '').replaceAll(/[-:]/g, '')

/** The audit log (spec 4.6 `audit.read`): read a page at a time, or export a window as CSV. */
export const auditRoutes = (authz: Authz, audit: AuditService) =>
  new Elysia({ name: 'audit-routes' })
    .use(authz)
    .get('/v1/organization/:id/audit', ({ principal, query }) => answer(audit.page(principal, query)), {
      catalogued: true,
      params: OrgParams,
      query: PageQuery,
      response: Ok(AuditPage),
      detail: { summary: 'Audit entries, newest first; page with nextCursor' },
    })
    .get(
      '/v1/organization/:id/audit.csv',
      async ({ principal, query }) => {
        const { from, to, body } = await audit.export(principal, query)
        return new Response(body, {
          headers: {
            'content-type': 'text/csv; charset=utf-8',
            'content-disposition': `attachment; filename="audit-${fileStamp(from)}-${fileStamp(to)}.csv"`,
            'cache-control': 'no-store',
          },
        })
      },
      {
        catalogued: true,
        params: OrgParams,
        query: ExportQuery,
        response: { 200: AuditCsv },
        detail: {
          summary: 'The audit log of one window as CSV (RFC 4180), streamed',
          description: `At most ${EXPORT_LIMITS.maxDays} days and ${EXPORT_LIMITS.maxRows} entries; a larger export is refused with 400 before it starts.`,
        },
      },
    )
