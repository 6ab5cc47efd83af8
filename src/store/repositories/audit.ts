import { and, desc, eq, gte, lt, lte, or, type SQL } from 'drizzle-orm'
import type { Database } from '../database'

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

export interface AuditQuery {
  orgId: string
  action?: string
  actorId?: string
  from?: Date
  to?: Date
  /** Keyset paging: entries strictly older than this one (newest first). */
  before?: { createdAt: Date; id: string }
  limit: number
}

export const auditRepository = ({ orm, tables: { auditLog } }: Database) => ({
  async append(entry: AuditEntry): Promise<void> {
    await orm.insert(auditLog).values(entry)
  },
  /** Newest first, filtered, one page; the organisation filter is always part of the query. */
  async query(q: AuditQuery): Promise<AuditEntry[]> {
    const conditions: SQL[] = [eq(auditLog.orgId, q.orgId)]
    if (q.action) conditions.push(eq(auditLog.action, q.action))
    if (q.actorId) conditions.push(eq(auditLog.actorId, q.actorId))
    if (q.from) conditions.push(gte(auditLog.createdAt, q.from))
    if (q.to) conditions.push(lte(auditLog.createdAt, q.to))
    if (q.before) {
      const older = or(
        lt(auditLog.createdAt, q.before.createdAt),
        and(eq(auditLog.createdAt, q.before.createdAt), lt(auditLog.id, q.before.id)),
      )
      if (older) conditions.push(older)
    }
    return orm
      .select()
      .from(auditLog)
      .where(and(...conditions))
      .orderBy(desc(auditLog.createdAt), desc(auditLog.id))
      .limit(q.limit)
  },
  async listForOrg(orgId: string, limit = 100): Promise<AuditEntry[]> {
    return orm
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.orgId, orgId)))
      .orderBy(desc(auditLog.createdAt))
      .limit(limit)
  },
})
