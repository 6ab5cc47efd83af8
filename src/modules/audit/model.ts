import { NextCursor, Paging } from '../../http/schema'
import { t } from '../../util/typebox'
import { AUDIT_PAGE, CSV_COLUMNS, EXPORT_LIMITS } from './service'

const { limit, cursor } = Paging(AUDIT_PAGE)

const filters = {
  action: t.Optional(t.String({ maxLength: 200 })),
  actorId: t.Optional(t.String({ maxLength: 200 })),
}

export const PageQuery = t.Object(
  {
    ...filters,
    from: t.Optional(t.String({ maxLength: 64, description: 'ISO 8601 date-time, inclusive' })),
    to: t.Optional(t.String({ maxLength: 64, description: 'ISO 8601 date-time, inclusive' })),
    cursor,
    limit,
  },
  { additionalProperties: false },
)
export type AuditPageFilter = typeof PageQuery.static

export const ExportQuery = t.Object(
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
export type AuditFilter = typeof ExportQuery.static

export const OrgParams = t.Object({ id: t.String() })

export const AuditEntry = t.Object({
  id: t.String(),
  createdAt: t.String({ format: 'date-time' }),
  actorId: t.Nullable(t.String()),
  principalKind: t.Union([t.Literal('session'), t.Literal('api_key'), t.Literal('cli'), t.Literal('system')]),
  action: t.String(),
  target: t.Nullable(t.String()),
  sourceIp: t.Nullable(t.String()),
  outcome: t.Union([t.Literal('success'), t.Literal('failure')]),
  detail: t.Nullable(t.Record(t.String(), t.Unknown())),
})

export const AuditPage = t.Object({
  entries: t.Array(AuditEntry),
  nextCursor: NextCursor,
})

/**
 * The export's body. The handler answers a streamed `Response` (text/csv, as an attachment), which
 * Elysia sends as it is without checking it against this schema: the schema is there to document it.
 */
export const AuditCsv = t.String({
  contentMediaType: 'text/csv',
  description: `RFC 4180 CSV in UTF-8, sent as text/csv and as an attachment, newest first; the header row is ${CSV_COLUMNS.join(',')}`,
})
