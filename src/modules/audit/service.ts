import type { Principal } from '../../auth/principal'
import { badRequest } from '../../errors'
import type { AuditEntry } from '../../store/repositories/audit'
import type { Store } from '../../store/store'
import { csvRow } from './csv'

export interface AuditFilter {
  action?: string
  actorId?: string
  from?: string
  to?: string
  cursor?: string
  limit?: number
}

export const DEFAULT_PAGE = 100
export const MAX_PAGE = 1_000
/** An export is paged through internally; past this many rows it stops and says so in its last line. */
export const MAX_EXPORT_ROWS = 100_000

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

const CSV_COLUMNS = ['id', 'created_at', 'actor_id', 'principal_kind', 'action', 'target', 'source_ip', 'outcome', 'detail']

/** The cursor is the last entry of a page: its time and id, opaque to the caller. */
const encodeCursor = (e: AuditEntry) => Buffer.from(`${e.createdAt.getTime()}|${e.id}`).toString('base64url')

function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  const [time, id] = Buffer.from(cursor, 'base64url').toString().split('|')
  const createdAt = new Date(Number(time))
  if (!id || Number.isNaN(createdAt.getTime())) throw badRequest('cursor is not one this API returned')
  return { createdAt, id }
}

function date(value: string | undefined, name: string): Date | undefined {
  if (value === undefined) return undefined
  const parsed = new Date(value)
  if (Number.isNaN(parsed.getTime())) throw badRequest(`${name} must be an ISO 8601 date-time`)
  return parsed
}

export class AuditService {
  constructor(private readonly store: Store) {}

  async page(principal: Principal, filter: AuditFilter) {
    const limit = filter.limit ?? DEFAULT_PAGE
    const entries = await this.store.audit.query({ ...this.query(principal, filter), limit: limit + 1 })
    const page = entries.slice(0, limit)
    const last = page.at(-1)
    return { entries: page.map(view), nextCursor: entries.length > limit && last ? encodeCursor(last) : null }
  }

  /** The whole filtered log as CSV, newest first, read a page at a time. */
  async *csv(principal: Principal, filter: AuditFilter): AsyncGenerator<string> {
    yield csvRow(CSV_COLUMNS)
    let before = filter.cursor ? decodeCursor(filter.cursor) : undefined
    let rows = 0
    while (rows < MAX_EXPORT_ROWS) {
      const entries = await this.store.audit.query({
        ...this.query(principal, filter),
        before,
        limit: Math.min(MAX_PAGE, MAX_EXPORT_ROWS - rows),
      })
      for (const e of entries) {
        yield csvRow([
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
      }
      rows += entries.length
      const last = entries.at(-1)
      if (entries.length < MAX_PAGE || !last) return
      before = { createdAt: last.createdAt, id: last.id }
    }
    yield csvRow([`# export stopped at ${MAX_EXPORT_ROWS} rows; narrow it with from/to`])
  }

  private query(principal: Principal, filter: AuditFilter) {
    return {
      orgId: principal.orgId,
      action: filter.action,
      actorId: filter.actorId,
      from: date(filter.from, 'from'),
      to: date(filter.to, 'to'),
      before: filter.cursor ? decodeCursor(filter.cursor) : undefined,
    }
  }
}
