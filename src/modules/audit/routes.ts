import { Elysia, t } from 'elysia'
import type { Authz } from '../../http/authz'
import { type AuditService, EXPORT_LIMITS, MAX_PAGE } from './service'

const filters = {
  action: t.Optional(t.String({ maxLength: 200 })),
  actorId: t.Optional(t.String({ maxLength: 200 })),
}
const PageQuery = t.Object(
  {
    ...filters,
    from: t.Optional(t.String({ maxLength: 64, description: 'ISO 8601 date-time, inclusive' })),
    to: t.Optional(t.String({ maxLength: 64, description: 'ISO 8601 date-time, inclusive' })),
    cursor: t.Optional(t.String({ maxLength: 200 })),
    // Whole numbers only: `2.5` would reach the database as LIMIT 3.5.
    limit: t.Optional(t.Numeric({ minimum: 1, maximum: MAX_PAGE, multipleOf: 1 })),
  },
  { additionalProperties: false },
)
const ExportQuery = t.Object(
  {
    ...filters,
    from: t.Optional(
      t.String({
        maxLength: 64,
        description: `ISO 8601 date-time, inclusive; ${EXPORT_LIMITS.defaultDays} days before \`to\` by default`,
      }),
    ),
    to: t.Optional(t.String({ maxLength: 64, description: 'ISO 8601 date-time, inclusive; now by default' })),
  },
  { additionalProperties: false },
)
const OrgParams = t.Object({ id: t.String() })

/** `20260101T000000Z`: an instant that is safe in a file name on every system. */
const fileStamp = (at: Date) => at.toISOString().replace(/\.\d+/, '').replaceAll(/[-:]/g, '')

/** The audit log (spec 4.6 `audit.read`): read a page at a time, or export a window as CSV. */
export const auditRoutes = (authz: Authz, audit: AuditService) =>
  new Elysia({ name: 'audit-routes' })
    .use(authz)
    .get(
      '/v1/organization/:id/audit',
      async ({ principal, query }) => ({ data: await audit.page(principal, query), error: null }),
      {
        catalogued: true,
        params: OrgParams,
        query: PageQuery,
        detail: { summary: 'Audit entries, newest first; page with nextCursor' },
      },
    )
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
        detail: {
          summary: 'The audit log of one window as CSV (RFC 4180), streamed',
          description: `At most ${EXPORT_LIMITS.maxDays} days and ${EXPORT_LIMITS.maxRows} entries; a larger export is refused with 400 before it starts.`,
        },
      },
    )
