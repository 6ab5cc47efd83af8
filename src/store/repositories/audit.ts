import { and, count, desc, eq, gte, lt, lte, or, type SQL } from 'drizzle-orm'
import type { Database } from '../database'
import { orgRows } from '../scope'

export interface AuditEntry {
  id: string
  orgId: string
  actorId: string | null
  principalKind: 'session' | 'api_key' | 'cli' | 'system'
  action: string
  target: string | null
  sourceIp: string | null
  outcome: 'success' | 'failure'
  detail: Record<string, unknown> | null
  createdAt: Date
}

/** Which entries of the organisation: the filters of a read, without its paging. */
export interface AuditFilterQuery {
  action?: string
  actorId?: string
  from?: Date
  to?: Date
}

export interface AuditQuery extends AuditFilterQuery {
  /** Keyset paging: entries strictly older than this one (newest first). */
  before?: { createdAt: Date; id: string }
  limit: number
}

/** One organisation's audit log: appended by the one recorder, read newest first. */
export const auditRepository = ({ orm, tables: { auditLog } }: Database, orgId: string) => {
  const entries = orgRows(auditLog, orgId)
  const matching = (q: AuditFilterQuery): SQL => {
    const conditions: Array<SQL | undefined> = []
    if (q.action) conditions.push(eq(auditLog.action, q.action))
    if (q.actorId) conditions.push(eq(auditLog.actorId, q.actorId))
    if (q.from) conditions.push(gte(auditLog.createdAt, q.from))
    if (q.to) conditions.push(lte(auditLog.createdAt, q.to))
    return entries.where(...conditions)
  }

  return {
    async append(fields: Omit<AuditEntry, 'orgId'>): Promise<void> {
      await orm.insert(auditLog).values(entries.row(fields))
    },
    /** Newest first, filtered, one page; the organisation filter is always part of the query. */
    async query(q: AuditQuery): Promise<AuditEntry[]> {
      const conditions: Array<SQL | undefined> = [matching(q)]
      if (q.before) {
        const { createdAt, id } = q.before
        conditions.push(
          // Implied by the next condition, but Postgres starts its scan of audit_org_time_idx at the
          // cursor only given a plain bound: with the OR alone it reads the organisation's newer entries
          // again for every page and filters them out (SQLite derives the bound either way).
          lte(auditLog.createdAt, createdAt),
          or(lt(auditLog.createdAt, createdAt), and(eq(auditLog.createdAt, createdAt), lt(auditLog.id, id))),
        )
      }
      return orm
        .select()
        .from(auditLog)
        .where(and(...conditions))
        .orderBy(desc(auditLog.createdAt), desc(auditLog.id))
        .limit(q.limit)
    },
    /**
     * How many entries match, counting no further than `atMost`: enough to refuse an export that is
     * too large, without the cost of counting an organisation's whole log.
     */
    async countUpTo(q: AuditFilterQuery, atMost: number): Promise<number> {
      // Only indexed columns, so that without an action or actor filter the index alone can answer.
      const capped = orm.select({ at: auditLog.createdAt }).from(auditLog).where(matching(q)).limit(atMost).as('capped')
      const [row] = await orm.select({ n: count() }).from(capped)
      return row?.n ?? 0
    },
    async list(limit = 100): Promise<AuditEntry[]> {
      return orm.select().from(auditLog).where(entries.where()).orderBy(desc(auditLog.createdAt)).limit(limit)
    },
  }
}
