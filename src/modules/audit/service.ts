import type { Principal } from '../../auth/principal'
import { badRequest } from '../../errors'
import type { PageSize } from '../../http/schema'
import type { Logger } from '../../log'
import { decodeCursor, keysetPage, type PagePosition } from '../../query/cursor'
import { errorMessage } from '../../store/faults'
import type { AuditEntry, AuditFilterQuery } from '../../store/repositories/audit'
import type { OrgRepositories, Store } from '../../store/store'
import { csvRow } from '../../util/csv'
import type { AuditFilter, AuditPageFilter } from './model'
import { textStream } from './stream'

export const AUDIT_PAGE: PageSize = { maxLimit: 1_000, defaultLimit: 100 }

const DAY_MS = 86_400_000

/** What bounds one CSV export; see docs/decisions.md, "Audit log (reading it)". */
export interface ExportLimits {
  /** More matching entries than this and the export is refused before it starts. */
  readonly maxRows: number
  /** The longest from..to an export may cover. */
  readonly maxDays: number
  /** The window when the caller names no `from`: this many days up to `to`. */
  readonly defaultDays: number
  /** Entries read per database query, and written per chunk. */
  readonly pageSize: number
}

export const EXPORT_LIMITS: ExportLimits = { maxRows: 100_000, maxDays: 366, defaultDays: 30, pageSize: 1_000 }

export interface AuditExport {
  /** The window the export covers, defaults applied: the caller may not have named it. */
  from: Date
  to: Date
  body: ReadableStream<Uint8Array>
}

const view = (e: AuditEntry) => ({
  id: e.id,
  createdAt: e.createdAt.toISOString(),
  actorId: e.actorId,
  principalKind: e.principalKind,
  action: e.action,
  target: e.target,
  sourceIp: e.sourceIp,
  outcome: e.outcome,
  detail: e.detail,
})

export const CSV_COLUMNS = [
  'id',
  'created_at',
  'actor_id',
  'principal_kind',
  'action',
  'target',
  'source_ip',
  'outcome',
  'detail',
]

const csvLine = (e: AuditEntry): string =>
  csvRow([
    e.id,
    e.createdAt.toISOString(),
    e.actorId,
    e.principalKind,
    e.action,
    e.target,
    e.sourceIp,
    e.outcome,
    e.detail ? JSON.stringify(e.detail) : null,
  ])

/** A date, or a date and time with an optional zone: what ISO 8601 writes (`new Date` also reads "March 3"). */
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/

function date(value: string | undefined, name: string): Date | undefined {
  if (value === undefined) return undefined
  const parsed = new Date(value)
  if (!ISO_DATE_TIME.test(value) || Number.isNaN(parsed.getTime())) throw badRequest(`${name} must be an ISO 8601 date-time`)
  return parsed
}

function range(filter: AuditFilter): { from?: Date; to?: Date } {
  const from = date(filter.from, 'from')
  const to = date(filter.to, 'to')
  if (from && to && from > to) throw badRequest('from must not be later than to')
  return { from, to }
}

export class AuditService {
  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
    private readonly limits: ExportLimits = EXPORT_LIMITS,
  ) {}

  /** One page, newest first. A page is the bound here: at most AUDIT_PAGE.maxLimit entries, however long the range. */
  async page(principal: Principal, filter: AuditPageFilter) {
    const limit = filter.limit ?? AUDIT_PAGE.defaultLimit
    const entries = await this.store.org(principal.orgId).audit.query({
      ...filterQuery(filter),
      ...range(filter),
      before: filter.cursor ? decodeCursor(filter.cursor) : undefined,
      limit: limit + 1,
    })
    const { page, nextCursor } = keysetPage(entries, limit)
    return { entries: page.map(view), nextCursor }
  }

  /**
   * The filtered log of a bounded window as CSV, newest first, streamed a page at a time. Everything
   * that can be refused is refused here, before the first byte, as a 400: an export is either whole
   * or refused, never cut short with a status that says it succeeded.
   */
  async export(principal: Principal, filter: AuditFilter): Promise<AuditExport> {
    const asked = range(filter)
    const to = asked.to ?? new Date(this.now())
    const from = asked.from ?? new Date(to.getTime() - this.limits.defaultDays * DAY_MS)
    if (from > to) throw badRequest('from must not be later than to (now, when to is not given)')
    if (to.getTime() - from.getTime() > this.limits.maxDays * DAY_MS)
      throw badRequest(`from and to may be at most ${this.limits.maxDays} days apart in one export; export the range in parts`, {
        maxDays: this.limits.maxDays,
      })
    const audit = this.store.org(principal.orgId).audit
    const query = { ...filterQuery(filter), from, to }
    const found = await audit.countUpTo(query, this.limits.maxRows + 1)
    if (found > this.limits.maxRows)
      throw badRequest(
        `more than ${this.limits.maxRows} entries match from ${from.toISOString()} to ${to.toISOString()}, the most one export holds; narrow from and to, or filter by action or actorId`,
        { maxRows: this.limits.maxRows },
      )
    const written = { rows: 0 }
    const body = textStream(this.csv(audit, query, written), (error) =>
      this.log.error('audit export failed after it had begun; the download was cut', {
        orgId: principal.orgId,
        rowsWritten: written.rows,
        error: errorMessage(error),
      }),
    )
    return { from, to, body }
  }

  /**
   * One chunk per page. The pages run newest first from a fixed `to`, so an entry written while the
   * export runs is newer than the cursor and does not join it: the export stays the size that was
   * counted (give or take those written between the count and the first page), however slowly the
   * client reads.
   */
  private async *csv(
    audit: OrgRepositories['audit'],
    query: AuditFilterQuery,
    written: { rows: number },
  ): AsyncGenerator<string> {
    yield csvRow(CSV_COLUMNS)
    let before: PagePosition | undefined
    for (;;) {
      const entries = await audit.query({ ...query, before, limit: this.limits.pageSize })
      written.rows += entries.length
      if (entries.length > 0) yield entries.map(csvLine).join('')
      const last = entries.at(-1)
      if (entries.length < this.limits.pageSize || !last) return
      before = { createdAt: last.createdAt, id: last.id }
    }
  }
}

const filterQuery = (filter: AuditFilter): AuditFilterQuery => ({ action: filter.action, actorId: filter.actorId })
