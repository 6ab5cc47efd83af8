import { and, desc, eq } from 'drizzle-orm'
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

export const auditRepository = ({ orm, tables: { auditLog } }: Database) => ({
  async append(entry: AuditEntry): Promise<void> {
    await orm.insert(auditLog).values(entry)
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
